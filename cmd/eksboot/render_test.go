package main

import (
	"bytes"
	"debug/buildinfo"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/cli"
	"github.com/eksboot/eksboot/internal/testtools"
)

// renderOnly are what render's implementation links and the node's binary must not:
// Go initialises every package a binary links at every start, and these are for a
// command no boot runs (gojq's initialisation alone is 2,278 allocations).
var renderOnly = []string{
	"github.com/eksboot/eksboot/render",
	"github.com/eksboot/eksboot/render/sim",
	"github.com/itchyny/gojq",
	"mvdan.cc/sh/v3",
}

// linksRenderOnly reports whether the package or module path p is one of renderOnly
// or inside one.
func linksRenderOnly(p string) bool {
	for _, r := range renderOnly {
		if p == r || strings.HasPrefix(p, r+"/") {
			return true
		}
	}
	return false
}

// deps lists the packages the main package in dir links (go list -deps).
func deps(t *testing.T, dir string, tags string) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-tags", tags, dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			t.Fatalf("go list -deps %s: %v\n%s", dir, err, exit.Stderr)
		}
		t.Fatalf("go list -deps %s: %v", dir, err)
	}
	return strings.Fields(string(out))
}

// TestNodeBinaryLinksNoRender: the node image's eksboot (-tags node, make build's)
// links none of render's implementation (render, render/sim, gojq, mvdan.cc/sh),
// neither as go list sees the package nor in the built binary's modules, so none of
// their initialisation runs at boot; eksboot-render links them all, and so does the
// default build of cmd/eksboot, with every command in one program (else this test
// would check nothing).
func TestNodeBinaryLinksNoRender(t *testing.T) {
	for _, p := range deps(t, ".", testtools.NodeTags) {
		if linksRenderOnly(p) {
			t.Errorf("cmd/eksboot links %s: render's implementation belongs in cmd/eksboot-render (cli/rendercmd), which package cli must not import", p)
		}
	}
	info, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range info.Deps {
		if linksRenderOnly(m.Path) {
			t.Errorf("the built eksboot holds the module %s %s", m.Path, m.Version)
		}
	}
	for _, program := range []struct{ dir, tags string }{{"../eksboot-render", ""}, {".", ""}} {
		linked := map[string]bool{}
		for _, p := range deps(t, program.dir, program.tags) {
			linked[p] = true
		}
		for _, p := range []string{"github.com/eksboot/eksboot/render", "github.com/eksboot/eksboot/render/sim", "github.com/itchyny/gojq", "mvdan.cc/sh/v3/interp"} {
			if !linked[p] {
				t.Errorf("%s (tags %q) does not link %s", program.dir, program.tags, p)
			}
		}
	}
}

// runProgram runs path as argv0 (path when empty) with args, with PATH=pathEnv and
// EKSBOOT_TEST_VAR=passed, and returns its exit status and output.
func runProgram(t *testing.T, path, argv0, pathEnv string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(path, args...)
	if argv0 != "" {
		cmd.Args[0] = argv0
	}
	cmd.Env = []string{"PATH=" + pathEnv, "HOME=" + t.TempDir(), "EKSBOOT_TEST_VAR=passed"}
	return runCmd(t, cmd)
}

// TestRenderExecsEksbootRender: `eksboot render` runs the eksboot-render beside it (as
// make build and install.sh put it) as "eksboot render": its output, messages and
// exit status (0, 1 and 2) are eksboot-render's own, byte for byte; through a symlink
// to eksboot too, with nothing on PATH.
func TestRenderExecsEksbootRender(t *testing.T) {
	render := filepath.Join(filepath.Dir(binary), "eksboot-render")
	dir := t.TempDir()
	nothing := filepath.Join(dir, "nothing")
	if err := os.WriteFile(nothing, []byte("#!/bin/bash\necho hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "bin", "eksboot")
	if err := os.Mkdir(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(binary, link); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	sample := "../../testdata/userdata/08-karpenter-al2023-nodeconfig.userdata"
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string // in stdout for 0, else in stderr
	}{
		{"rendered", []string{"--user-data", sample, "--instance-type", "m5.large"}, 0, "# eksboot render: m5.large in us-west-2, from "},
		{"no user data to render", []string{"--user-data", nothing, "--instance-type", "m5.large"}, 1, "eksboot render: error: no NodeConfig part and no /etc/eks/bootstrap.sh command line in the user data"},
		{"bad region", []string{"--user-data", sample, "--instance-type", "m5.large", "--region", "mars"}, 2, `eksboot render: --region "mars": want a region name such as us-west-2` + "\n"},
		{"bad flag", []string{"--nope"}, 2, "eksboot render: unknown flag: --nope (see --help)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runProgram(t, binary, "", empty, append([]string{"render"}, tc.args...)...)
			got := stdout
			if tc.code != 0 {
				got = stderr
			}
			if code != tc.code || !strings.Contains(got, tc.want) {
				t.Fatalf("eksboot render: exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, tc.code, tc.want, stdout, stderr)
			}
			wcode, wstdout, wstderr := runProgram(t, render, "eksboot render", empty, tc.args...)
			if code != wcode || stdout != wstdout || stderr != wstderr {
				t.Errorf("eksboot render: exit %d\n%s\n%s\neksboot-render as \"eksboot render\": exit %d\n%s\n%s", code, stdout, stderr, wcode, wstdout, wstderr)
			}
			lcode, lstdout, lstderr := runProgram(t, link, "", empty, append([]string{"render"}, tc.args...)...)
			if code != lcode || stdout != lstdout || stderr != lstderr {
				t.Errorf("through a symlink to eksboot: exit %d\n%s\n%s", lcode, lstdout, lstderr)
			}
			dcode, dstdout, dstderr := runProgram(t, render, "", empty, tc.args...)
			if dcode != code || dstdout != stdout || dstderr != strings.ReplaceAll(stderr, "eksboot render: ", "eksboot-render: ") {
				t.Errorf("eksboot-render run directly: exit %d\n%s\n%s", dcode, dstdout, dstderr)
			}
		})
	}
}

// TestRenderFindsEksbootRenderOnPath: with none beside it, eksboot render execs the
// eksboot-render on PATH, with render's arguments and the environment, and its exit
// status is the program's.
func TestRenderFindsEksbootRenderOnPath(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "eksboot")
	copyBinary(t, binary, alone)
	bin := t.TempDir()
	stand := "#!/bin/sh\nprintf '%s|' \"$@\"\necho \"EKSBOOT_TEST_VAR=$EKSBOOT_TEST_VAR\"\nexit 7\n"
	if err := os.WriteFile(filepath.Join(bin, "eksboot-render"), []byte(stand), 0o755); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runProgram(t, alone, "", bin, "render", "--user-data", "a b", "--instance-type", "m5.large", "")
	if want := "--user-data|a b|--instance-type|m5.large||EKSBOOT_TEST_VAR=passed\n"; code != 7 || stdout != want || stderr != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 7, %q", code, stdout, stderr, want)
	}
}

// TestRenderWithoutEksbootRender: an eksboot with no eksboot-render beside it or on
// PATH says so in one line, exits 1 and prints nothing else; its help needs no
// eksboot-render.
func TestRenderWithoutEksbootRender(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "eksboot")
	copyBinary(t, binary, alone)
	resolved, err := filepath.EvalSymlinks(alone)
	if err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	code, stdout, stderr := runProgram(t, alone, "", empty, "render", "--user-data", "../../testdata/userdata/08-karpenter-al2023-nodeconfig.userdata", "--instance-type", "m5.large")
	want := "eksboot render: eksboot-render is not beside " + resolved + " nor on PATH; render is a separate program so that a node's boot does not load its simulator (make build builds both; go build ./cmd/eksboot without -tags node links it in)\n"
	if code != 1 || stdout != "" || stderr != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", code, stdout, stderr, want)
	}
	code, stdout, stderr = runProgram(t, alone, "", empty, "render", "--help")
	if code != 0 || !strings.HasPrefix(stdout, "Usage: eksboot render --user-data FILE --instance-type TYPE [options]\n") || stderr != "" {
		t.Errorf("render --help without eksboot-render: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// copyBinary copies the executable src to dst.
func copyBinary(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestDefaultBuildRendersInProcess: cmd/eksboot built without the node tag (as this
// test is) runs render in its own process, with no eksboot-render anywhere, and
// prints what eksboot-render prints.
func TestDefaultBuildRendersInProcess(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	linkRender()
	sample := "../../testdata/userdata/08-karpenter-al2023-nodeconfig.userdata"
	args := []string{"--user-data", sample, "--instance-type", "m5.large"}
	var stdout, stderr bytes.Buffer
	if code := cli.Main(append([]string{"eksboot", "render"}, args...), &stdout, &stderr); code != 0 {
		t.Fatalf("eksboot render in process: exit %d\n%s", code, stderr.String())
	}
	code, want, _ := runProgram(t, filepath.Join(filepath.Dir(binary), "eksboot-render"), "eksboot render", t.TempDir(), args...)
	if code != 0 || stdout.String() != want {
		t.Errorf("in process:\n%s\neksboot-render (exit %d):\n%s", stdout.String(), code, want)
	}
}

// TestNoInitWorkOffTheCommonBoot: the packages a boot from bootstrap.sh's command
// line does not use, or uses only for a check it may never make, have no package
// initialisation (Go runs every linked package's at every start): doctor, the CEL
// evaluator of maxPodsExpression, NodeConfig's decoder, and imds, whose checks'
// regular expressions are lazy.Regexp literals. GODEBUG=inittrace=1 lists each
// package whose initialisation ran.
func TestNoInitWorkOffTheCommonBoot(t *testing.T) {
	cmd := exec.Command(binary, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("eksboot version: %v\n%s", err, stderr.String())
	}
	inits := map[string]bool{}
	for _, line := range strings.Split(stderr.String(), "\n") {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "init" {
			inits[f[1]] = true
		}
	}
	if !inits["github.com/eksboot/eksboot/cli"] {
		t.Fatalf("inittrace lists no eksboot package (the trace's format changed?):\n%s", stderr.String())
	}
	for _, p := range []string{"doctor", "maxpods/expr", "nodeconfig", "imds"} {
		if inits["github.com/eksboot/eksboot/"+p] {
			t.Errorf("github.com/eksboot/eksboot/%s has package initialisation: make its tables lazy (internal/lazy) or static", p)
		}
	}
}
