package packer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/render/sim"
	"github.com/eksboot/eksboot/userdata"
)

const (
	// shim is the bootstrap.sh that install.sh puts on the image.
	shim = "../assets/bootstrap.sh"
	// maxPodsSample is the user data whose script runs eksctl's maxPodsPerNode hook
	// (a sed on /etc/eks/bootstrap.sh) before calling bootstrap.sh.
	maxPodsSample = "../testdata/userdata/02-eksctl-mng-al2-merged-by-eks.userdata"
	// maxPodsFlag is what the sample's sed appends to the --kubelet-extra-args value.
	maxPodsFlag = "--max-pods=58"
	// shimExec is the shim's last line.
	shimExec = `exec /usr/bin/eksboot bootstrap "$@"`
)

// hookLine finds the sed line of eksctl's hook in a script.
var hookLine = regexp.MustCompile(`(?m)^sed -i '([^']*)' /etc/eks/bootstrap\.sh$`)

// maxPodsHook returns the sample's user data and the expression of its sed line,
// exactly as the user data runs it.
func maxPodsHook(t *testing.T) ([]userdata.Part, string) {
	t.Helper()
	raw, err := os.ReadFile(maxPodsSample)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := userdata.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if m := hookLine.FindStringSubmatch(string(p.Body)); m != nil {
			if !strings.Contains(m[1], `"$2 `+maxPodsFlag+`"`) {
				t.Fatalf("%s: the sed %q does not append %s", maxPodsSample, m[1], maxPodsFlag)
			}
			return parts, m[1]
		}
	}
	t.Fatalf("%s: no sed -i '...' /etc/eks/bootstrap.sh line", maxPodsSample)
	return nil, ""
}

// shimCopies returns two copies of the shim (0755): as it ships, and after the
// sample's sed, run with the real sed as the user data runs it.
func shimCopies(t *testing.T) (plain, edited string) {
	t.Helper()
	needTools(t, "sed")
	_, expr := maxPodsHook(t)
	b, err := os.ReadFile(shim)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain, edited = filepath.Join(dir, "bootstrap.sh"), filepath.Join(dir, "edited", "bootstrap.sh")
	writeFile(t, dir, "bootstrap.sh", string(b), 0o755)
	writeFile(t, dir, "edited/bootstrap.sh", string(b), 0o755)
	if code, out := command(t, ".", nil, "sed", "-i", expr, edited); code != 0 {
		t.Fatalf("sed -i %q: exit %d:\n%s", expr, code, out)
	}
	return plain, edited
}

// TestShimIsAScriptTheHookCanEdit checks the shim is a plain file (a symlink to
// eksboot would have the sed edit, or refuse to edit, the binary), that it ends by
// exec'ing eksboot by its absolute path, and that the sample's sed changes exactly one
// of its lines: the assignment of the --kubelet-extra-args value.
func TestShimIsAScriptTheHookCanEdit(t *testing.T) {
	t.Parallel()
	info, err := os.Lstat(shim)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Mode().IsRegular() {
		t.Fatalf("%s is a %v, want a regular file", shim, info.Mode().Type())
	}
	plain, edited := shimCopies(t)
	before, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(before), "\n"), "\n")
	if lines[0] != "#!/bin/sh" {
		t.Errorf("first line %q, want #!/bin/sh", lines[0])
	}
	if last := lines[len(lines)-1]; last != shimExec {
		t.Errorf("last line %q, want %q", last, shimExec)
	}
	afterLines := strings.Split(strings.TrimSuffix(string(after), "\n"), "\n")
	if len(afterLines) != len(lines) {
		t.Fatalf("the sed changed the number of lines: %d, then %d", len(lines), len(afterLines))
	}
	var changed []string
	for i := range lines {
		if lines[i] != afterLines[i] {
			changed = append(changed, fmt.Sprintf("line %d: %q -> %q", i+1, lines[i], afterLines[i]))
			if strings.TrimSpace(lines[i]) != `KUBELET_EXTRA_ARGS=$2` ||
				strings.TrimSpace(afterLines[i]) != `KUBELET_EXTRA_ARGS="$2 `+maxPodsFlag+`"` {
				t.Errorf("the sed changed line %d %q to %q", i+1, lines[i], afterLines[i])
			}
		}
	}
	if len(changed) != 1 {
		t.Errorf("the sed changed %d lines, want 1: %q", len(changed), changed)
	}
}

// fakeEksboot writes an eksboot stand-in that records its arguments (count first,
// each NUL-terminated) in the file $EKSBOOT_ARGV and exits 3, and returns its path.
func fakeEksboot(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, dir, "eksboot", "#!/bin/sh\nprintf '%s\\0' \"$#\" \"$@\" >\"$EKSBOOT_ARGV\"\nexit 3\n", 0o755)
	return filepath.Join(dir, "eksboot")
}

// readArgv reads what fakeEksboot recorded.
func readArgv(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("eksboot was not run: %v", err)
	}
	fields := strings.Split(string(bytes.TrimSuffix(b, []byte{0})), "\x00")
	if want := fmt.Sprint(len(fields) - 1); fields[0] != want {
		t.Fatalf("eksboot recorded %s arguments but %s came: %q", fields[0], want, fields[1:])
	}
	return fields[1:]
}

// withMaxPods is args as eksboot must get them after the sample's sed: the value of
// every --kubelet-extra-args (either form) with the flag appended.
func withMaxPods(args []string) []string {
	out := slices.Clone(args)
	for i := 0; i < len(out); i++ {
		switch {
		case out[i] == "--kubelet-extra-args" && i+1 < len(out):
			out[i+1] += " " + maxPodsFlag
			i++
		case strings.HasPrefix(out[i], "--kubelet-extra-args="):
			out[i] += " " + maxPodsFlag
		}
	}
	return out
}

// shimCase is one command line given to bootstrap.sh: eksboot must get args unchanged
// from the shim, and edited (nil: args again) from the shim after the sed.
type shimCase struct {
	name   string
	args   []string
	edited []string
}

// shimCases are command lines of every shape: quoting, empty words, both forms of
// the flag, words that look like the flag or like shell syntax.
func shimCases() []shimCase {
	m := func(s string) string { return s + " " + maxPodsFlag }
	labels := `--node-labels=a=b,c=d --register-with-taints=x=y:NoSchedule 'single' "double"`
	meta := "$HOME $(id) `id` * ? [a] ~ ; | && \\n \\ %s %b\n\t"
	var many []string
	for i := range 300 {
		many = append(many, fmt.Sprintf("word %d", i))
	}
	many = append(many, "--kubelet-extra-args", "--v=2")
	return []shimCase{
		{name: "no arguments"},
		{name: "cluster name only", args: []string{"my-cluster"}},
		{
			"spaces and quotes in the value",
			[]string{"my-cluster", "--kubelet-extra-args", labels, "--b64-cluster-ca", "Q0E="},
			[]string{"my-cluster", "--kubelet-extra-args", m(labels), "--b64-cluster-ca", "Q0E="},
		},
		{
			"flag=value form",
			[]string{"my-cluster", "--kubelet-extra-args=--node-labels=a=b --v=2"},
			[]string{"my-cluster", "--kubelet-extra-args=" + m("--node-labels=a=b --v=2")},
		},
		{
			"empty value",
			[]string{"my-cluster", "--kubelet-extra-args", ""},
			[]string{"my-cluster", "--kubelet-extra-args", m("")},
		},
		{
			"empty value, flag=value form, then an empty word",
			[]string{"--kubelet-extra-args=", "", "my-cluster"},
			[]string{"--kubelet-extra-args=" + m(""), "", "my-cluster"},
		},
		{name: "flag without a value at the end", args: []string{"my-cluster", "--kubelet-extra-args"}},
		{
			"given twice, both forms",
			[]string{"--kubelet-extra-args", "a", "my-cluster", "--kubelet-extra-args=b"},
			[]string{"--kubelet-extra-args", m("a"), "my-cluster", "--kubelet-extra-args=" + m("b")},
		},
		{
			"a value that is a flag",
			[]string{"my-cluster", "--kubelet-extra-args", "--kubelet-extra-args", "--b64-cluster-ca", "Q0E="},
			[]string{"my-cluster", "--kubelet-extra-args", m("--kubelet-extra-args"), "--b64-cluster-ca", "Q0E="},
		},
		{
			"shell syntax stays literal",
			[]string{"my-cluster", "--kubelet-extra-args", meta, "*", "$1", "-n", "-e", "--", "-", "a\nb", " lead", "trail ", "KUBELET_EXTRA_ARGS=$2", "日本"},
			[]string{"my-cluster", "--kubelet-extra-args", m(meta), "*", "$1", "-n", "-e", "--", "-", "a\nb", " lead", "trail ", "KUBELET_EXTRA_ARGS=$2", "日本"},
		},
		{
			"empty words around the flag",
			[]string{"", "", "--kubelet-extra-args", "", "", ""},
			[]string{"", "", "--kubelet-extra-args", m(""), "", ""},
		},
		{name: "names close to the flag's", args: []string{
			"--kubelet-extra-argsX", "v", "--kubelet-extra-arg", "v", "-kubelet-extra-args", "v",
			"--KUBELET-EXTRA-ARGS", "v", "--kubelet-extra-args-x=v", "kubelet-extra-args=v", "--kubelet-extra-args ", "v",
		}},
		{
			"eksboot's own flags",
			[]string{"my-cluster", "--root", "/tmp/a root", "--dry-run", "--kubelet-extra-args", "--max-pods=20", "--max-pods-mode", "prefix-delegation"},
			[]string{"my-cluster", "--root", "/tmp/a root", "--dry-run", "--kubelet-extra-args", m("--max-pods=20"), "--max-pods-mode", "prefix-delegation"},
		},
		{"300 words", many, withMaxPods(many)},
	}
}

// sampleCases are the bootstrap.sh command lines of the user-data samples (launch
// tools' real shapes), as the scripts pass them: the sample with eksctl's hook
// without its sed part, so its arguments are the ones bootstrap.sh is given.
func sampleCases(t *testing.T) []shimCase {
	t.Helper()
	files, err := filepath.Glob("../testdata/userdata/*.userdata*")
	if err != nil {
		t.Fatal(err)
	}
	var cases []shimCase
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		parts, err := userdata.Parse(raw)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		parts = slices.DeleteFunc(parts, func(p userdata.Part) bool { return hookLine.Match(p.Body) })
		// The first bootstrap.sh call, on a node with nothing but the standard
		// directories; a call whose words are known only at boot is left out.
		ev, err := sim.Evaluate(context.Background(), parts, sim.Options{})
		if err == nil && len(ev.Calls) > 0 && len(ev.Calls[0].Unknown) > 0 {
			err = errors.New(strings.Join(ev.Calls[0].Unknown, "; "))
		}
		if err != nil {
			t.Logf("%s: left out: %v", f, err)
			continue
		}
		if len(ev.Calls) == 0 {
			continue
		}
		call := ev.Calls[0]
		cases = append(cases, shimCase{"sample " + filepath.Base(f), call.Args, withMaxPods(call.Args)})
	}
	if !slices.ContainsFunc(cases, func(c shimCase) bool { return strings.HasSuffix(c.name, filepath.Base(maxPodsSample)) }) {
		t.Fatalf("no bootstrap.sh command line found in %s", maxPodsSample)
	}
	return cases
}

// TestShimPassesArgumentsAndTheHookAddsMaxPods runs the shim, under sh and bash (the
// image's /bin/sh is bash on AL2023, dash on Debian), with every case's arguments and
// a stand-in for /usr/bin/eksboot that records what it gets: from the shim as it
// ships, the same words in the same order; from a copy edited by eksctl's sed (sample
// 02), the same but for --kubelet-extra-args, whose value ends in --max-pods=58, as
// the sed made bootstrap.sh do on the AL2 image. The shim's exit status is eksboot's.
func TestShimPassesArgumentsAndTheHookAddsMaxPods(t *testing.T) {
	needTools(t, "bash")
	t.Parallel()
	plain, edited := shimCopies(t)
	eksboot := fakeEksboot(t)
	cases := append(shimCases(), sampleCases(t)...)
	for _, shell := range []string{"sh", "bash"} {
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					for _, v := range []struct {
						script string
						want   []string
					}{
						{plain, tc.args},
						{edited, cmpOr(tc.edited, tc.args)},
					} {
						argv := filepath.Join(t.TempDir(), "argv")
						env := []string{"EKSBOOT_ARGV=" + argv}
						name, args := v.script, tc.args
						if shell != "sh" {
							// The #! line is /bin/sh: name the shell to run it with another.
							name, args = shell, append([]string{v.script}, tc.args...)
						}
						code, out := withEksboot(t, eksboot, env, name, args...)
						if code != 3 {
							t.Fatalf("%s: exit %d, want eksboot's 3:\n%s", v.script, code, out)
						}
						got := readArgv(t, argv)
						want := append([]string{"bootstrap"}, v.want...)
						if !slices.Equal(got, want) {
							t.Errorf("%s: eksboot got %d words\n%q\nwant %d\n%q", v.script, len(got), got, len(want), want)
						}
					}
				})
			}
		})
	}
}

// cmpOr returns a, or b when a is nil (cmp.Or does not take slices).
func cmpOr(a, b []string) []string {
	if a == nil {
		return b
	}
	return a
}

// TestShimShellcheck runs shellcheck on the shim, as it ships and as the sed leaves it.
func TestShimShellcheck(t *testing.T) {
	needTools(t, "shellcheck")
	t.Parallel()
	plain, edited := shimCopies(t)
	for _, f := range []string{plain, edited} {
		if code, out := command(t, ".", nil, "shellcheck", f); code != 0 {
			t.Errorf("shellcheck %s: exit %d:\n%s", f, code, out)
		}
	}
}
