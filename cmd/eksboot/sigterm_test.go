package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestAStopSignalEndsABlockedRun starts the binary where a run blocks, sends SIGTERM
// (systemd's stop) or SIGINT (Ctrl-C) while it waits, and checks that the run ends
// within two seconds with exit status 1, a last line saying which signal stopped it
// and where, and nothing written: an IMDS that never answers the identity document
// (bootstrap) or the user data (init), whose requests the cancelled context ends; and
// a `kubelet --version` whose output never ends (a child holds it open), which no
// context reaches, so the run is given up after its grace second.
func TestAStopSignalEndsABlockedRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		init bool   // eksboot init, not bootstrap
		hang string // the IMDS path that never answers; "" for the kubelet stub
		want []string
	}{
		{
			"identity document, SIGTERM", syscall.SIGTERM, false, "latest/dynamic/instance-identity/document",
			[]string{`eksboot bootstrap: stopped by SIGTERM in the "instance facts" step (no file written): imds: latest/dynamic/instance-identity/document: SIGTERM received`},
		},
		{
			"identity document, SIGINT", syscall.SIGINT, false, "latest/dynamic/instance-identity/document",
			[]string{`eksboot bootstrap: stopped by SIGINT in the "instance facts" step (no file written): imds: latest/dynamic/instance-identity/document: SIGINT received`},
		},
		{
			"user data", syscall.SIGTERM, true, "latest/user-data",
			[]string{"eksboot init: stopped by SIGTERM", "(no file written): imds: latest/user-data: SIGTERM received"},
		},
		{
			"kubelet --version that never ends", syscall.SIGTERM, false, "",
			// Given up after its grace second today; in the "instance facts" step
			// once the read of a killed command's output is bounded (exec.Cmd's
			// WaitDelay), either way promptly and naming a step.
			[]string{"eksboot bootstrap: stopped by SIGTERM", " step (no file written)"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			c, fakes := startFakes(t, "01-m5large-usw2-vpc192")
			if err := c.WriteFiles(root); err != nil {
				t.Fatal(err)
			}
			before := tree(t, root)
			bin := t.TempDir()
			mark, pidFile := filepath.Join(bin, "started"), filepath.Join(bin, "child.pid")
			args := []string{"init", "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion}
			if !tc.init {
				args = append(append([]string{"bootstrap"}, c.Args...), "--root", root, "--no-restart")
				if tc.hang != "" {
					args = append(args, "--kubelet-version", c.KubeletVersion)
				}
			}
			args = append(args, "--imds-endpoint", fakes.IMDS.URL(), "--imds-timeout", "10m")
			if tc.hang != "" {
				fakes.IMDS.SetHang(tc.hang, true)
			} else {
				// A kubelet whose child keeps its output open: killing the kubelet
				// does not end the read of its output.
				stub := "#!/bin/sh\nsleep 60 &\necho $! > " + pidFile + "\ntouch " + mark + "\nwait\n"
				if err := os.WriteFile(filepath.Join(bin, "kubelet"), []byte(stub), 0o755); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() {
					if b, err := os.ReadFile(pidFile); err == nil {
						if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
							_ = syscall.Kill(pid, syscall.SIGKILL)
						}
					}
				})
			}
			cmd := exec.Command(binary, args...)
			cmd.Env = []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range fakes.Env() {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			blocked := func() bool {
				if tc.hang == "" {
					_, err := os.Stat(mark)
					return err == nil
				}
				return asked(fakes.IMDS.Requests(), "/"+tc.hang)
			}
			for deadline := time.Now().Add(10 * time.Second); !blocked(); time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					_ = cmd.Process.Kill()
					err := <-done
					t.Fatalf("the run never got to where it blocks (killed: %v); stderr:\n%s", err, stderr.String())
				}
			}
			time.Sleep(50 * time.Millisecond) // well inside the blocking call
			sent := time.Now()
			if err := cmd.Process.Signal(tc.sig); err != nil {
				t.Fatal(err)
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				_ = cmd.Process.Kill()
				err := <-done
				t.Fatalf("still running 5s after %v (killed: %v); stderr:\n%s", tc.sig, err, stderr.String())
			}
			took := time.Since(sent)
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			}
			lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
			last := lines[len(lines)-1]
			t.Logf("%v after %v, exit %d: %s", tc.sig, took.Round(time.Millisecond), code, last)
			for _, w := range tc.want {
				if !strings.Contains(last, w) {
					t.Errorf("last line %q lacks %q", last, w)
				}
			}
			if code != 1 {
				t.Errorf("exit %d, want 1; stderr:\n%s", code, stderr.String())
			}
			// A run that ends on the cancelled context stops at once; a blocked one
			// after its grace second (the margin is for a loaded machine).
			if limit := map[bool]time.Duration{true: 1500 * time.Millisecond, false: 2500 * time.Millisecond}[tc.hang != ""]; took > limit {
				t.Errorf("took %v to stop after %v; want under %v", took, tc.sig, limit)
			}
			after := tree(t, root)
			if len(after) != len(before) {
				t.Errorf("the root changed: %d files before, %d after", len(before), len(after))
			}
			for k, v := range before {
				if after[k] != v {
					t.Errorf("%s changed", k)
				}
			}
		})
	}
}

// asked reports whether a request for path is among reqs.
func asked(reqs []imdstest.Request, path string) bool {
	for _, r := range reqs {
		if r.Path == path {
			return true
		}
	}
	return false
}
