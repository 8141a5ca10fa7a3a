package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestANamedPipeInputFailsTheRunAtOnce: a FIFO where the binary reads the AMI's
// containerd template, or given as --containerd-config-file, fails the run at once
// with the path named and writes nothing (before, the run blocked forever in open).
func TestANamedPipeInputFailsTheRunAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name, fifo string
		extra      []string
		code       int
	}{
		{"the AMI's template", "/etc/eks/containerd/containerd-config.toml", nil, 1},
		{"--containerd-config-file", "/etc/my-containerd.toml", []string{"--containerd-config-file", "/etc/my-containerd.toml"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env, args := startCase(t, "01-m5large-usw2-vpc192", root)
			p := filepath.Join(root, tc.fifo)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			before := names(t, root) // not tree: it would read the FIFO
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append(args, tc.extra...)...) // killed if it blocks
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var out bytes.Buffer
			cmd.Stderr = &out
			start := time.Now()
			_ = cmd.Run()
			if ctx.Err() != nil {
				t.Fatalf("the run still blocked after 20s on the FIFO %s (killed)", tc.fifo)
			}
			code, stderr := cmd.ProcessState.ExitCode(), out.String()
			want := tc.fifo + ": a named pipe (FIFO); refusing to read it"
			if code != tc.code || !strings.Contains(stderr, want) {
				t.Fatalf("exit %d after %v, want %d and %q in:\n%s", code, time.Since(start), tc.code, want, stderr)
			}
			if after := names(t, root); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("the failed run wrote into the root:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// names lists every entry under root, without reading any.
func names(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		out = append(out, p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
