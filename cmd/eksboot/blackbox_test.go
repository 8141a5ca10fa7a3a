package main

import (
	"bytes"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/testtools"
)

var update = flag.Bool("update", false, "rewrite testdata/blackbox from what the binary writes")

const (
	goldenDir   = "../../testdata/golden"
	blackboxDir = "../../testdata/blackbox"
)

// binary is the eksboot binary built once for the package's tests, with
// eksboot-render beside it (make build's bin/).
var binary string

func TestMain(m *testing.M) {
	flag.Parse()
	testtools.MainWithEksboot(m, ".", &binary, "../eksboot-render")
}

// TestStatic checks the binary needs no dynamic loader (it runs on any node image).
func TestStatic(t *testing.T) {
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Fatalf("the binary has a %v program header: it is not static", p.Type)
		}
	}
}

// run runs the binary with args and env and returns its exit status and output.
func run(t *testing.T, env map[string]string, argv0 string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if argv0 != "" {
		link := filepath.Join(t.TempDir(), argv0)
		if err := os.Symlink(binary, link); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(link, args...)
	}
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns its exit status and output; a command that could not
// be run fails the test.
func runCmd(t *testing.T, cmd *exec.Cmd) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	t.Fatalf("run %s: %v", cmd.Path, err)
	return 0, "", ""
}

// startFakes loads the golden case name and starts its fakes, closed when the test
// ends.
func startFakes(t testing.TB, name string) (goldencase.Case, *goldencase.Fakes) {
	t.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, name))
	if err != nil {
		t.Fatal(err)
	}
	fakes, err := c.Start()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fakes.Close)
	return c, fakes
}

// startCase starts the fakes of a golden case and returns the environment and the
// arguments (the case's, plus the root and the fake IMDS) for the binary.
func startCase(t *testing.T, name, root string) (map[string]string, []string) {
	t.Helper()
	c, fakes := startFakes(t, name)
	if err := c.WriteFiles(root); err != nil {
		t.Fatal(err)
	}
	env := fakes.Env()
	for k, v := range c.Env {
		env[k] = v
	}
	args := append([]string{"bootstrap"}, c.Args...)
	args = append(args, "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion,
		"--imds-endpoint", fakes.IMDS.URL())
	return env, args
}

// tree returns every file under root as "path mode" -> content.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[rel+" link"] = target
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[fmt.Sprintf("%s %04o", rel, info.Mode().Perm())] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestBlackbox runs the built binary on golden cases into a temporary root and
// compares the whole tree, modes included, with testdata/blackbox/<case>.
func TestBlackbox(t *testing.T) {
	for _, tc := range []struct {
		name, golden string
		extra        []string
	}{
		{"01-m5large-usw2-vpc192", "01-m5large-usw2-vpc192", nil},
		{"03-dnsip-nomaxpods-extraargs", "03-dnsip-nomaxpods-extraargs", nil},
		{"07-cn-north-1", "07-cn-north-1", nil},
		{"10-ipv6", "10-ipv6", nil},
		{"01-graceful-shutdown", "01-m5large-usw2-vpc192", []string{"--graceful-shutdown"}},
	} {
		name := tc.name
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			env, args := startCase(t, tc.golden, root)
			code, _, stderr := run(t, env, "", append(args, tc.extra...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if strings.Contains(stderr, "BEGIN CERTIFICATE") || strings.Contains(stderr, "LS0tLS1CRUdJTi") {
				t.Errorf("the log shows the CA:\n%s", stderr)
			}
			got := tree(t, root)
			wantDir := filepath.Join(blackboxDir, name)
			if *update {
				writeTree(t, wantDir, got)
			}
			want := tree(t, wantDir)
			testtools.CompareTrees(t, got, want)
		})
	}
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for key, content := range files {
		rel, modeStr, _ := strings.Cut(key, " ")
		var mode os.FileMode
		if _, err := fmt.Sscanf(modeStr, "%o", &mode); err != nil {
			t.Fatalf("mode %q: %v", modeStr, err)
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBadInputWritesNothing checks that bad input gets one line naming the flag, exit
// status 2, and leaves the root untouched.
func TestBadInputWritesNothing(t *testing.T) {
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{"unknown flag", []string{"--foo", "bar"}, "unknown flag: --foo"},
		{"missing value", []string{"--dns-cluster-ip"}, "flag needs an argument: --dns-cluster-ip"},
		{"CA not base64", []string{"--b64-cluster-ca", "not*base64"}, "--b64-cluster-ca"},
		{"endpoint not https", []string{"--apiserver-endpoint", "http://x.example.com"}, "--apiserver-endpoint"},
		{"dns ip", []string{"--dns-cluster-ip", "10.0.0.1,nope"}, "--dns-cluster-ip"},
		{"ip family", []string{"--ip-family", "ipv5"}, "--ip-family"},
		{"ipv6 cidr with ipv4", []string{"--ip-family", "ipv4", "--service-ipv6-cidr", "fd00::/108"}, "--service-ipv6-cidr"},
		{"ipv6 without cidr", []string{"--ip-family", "ipv6"}, "--ip-family ipv6 needs"},
		{"newline in extra args", []string{"--kubelet-extra-args", "--a=1\n[Service]"}, "--kubelet-extra-args"},
		{"missing containerd config file", []string{"--containerd-config-file", "/etc/nope.toml"}, "--containerd-config-file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			env, args := startCase(t, "01-m5large-usw2-vpc192", root)
			code, stdout, stderr := run(t, env, "", append(args, tc.extra...)...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if code != 2 || !strings.Contains(last, tc.want) || strings.Contains(stderr, "ERROR") {
				t.Errorf("exit %d, stderr %q, stdout %q; want exit 2 and a last line naming %s", code, stderr, stdout, tc.want)
			}
			if files := tree(t, root); len(files) != 0 {
				t.Errorf("wrote %d files", len(files))
			}
		})
	}
	t.Run("no cluster name", func(t *testing.T) {
		root := t.TempDir()
		code, _, stderr := run(t, nil, "bootstrap.sh", "--root", root, "--b64-cluster-ca", "eA==", "--apiserver-endpoint", "https://x.example.com")
		if code != 2 || !strings.Contains(stderr, "CLUSTER_NAME is missing") {
			t.Errorf("exit %d, stderr %q", code, stderr)
		}
	})
}

// TestBootstrapShName checks that invoked as bootstrap.sh the binary takes
// bootstrap.sh's command line (no subcommand) and configures the same node.
func TestBootstrapShName(t *testing.T) {
	root := t.TempDir()
	env, args := startCase(t, "01-m5large-usw2-vpc192", root)
	code, _, stderr := run(t, env, "bootstrap.sh", args[1:]...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	testtools.CompareTrees(t, tree(t, root), tree(t, filepath.Join(blackboxDir, "01-m5large-usw2-vpc192")))

	code, stdout, _ := run(t, nil, "bootstrap.sh", "--help")
	if code != 0 || !strings.Contains(stdout, "--b64-cluster-ca") || !strings.Contains(stdout, "--kubelet-extra-args") {
		t.Errorf("--help: exit %d, stdout %q", code, stdout)
	}
}

// TestDryRunAndRerun checks that --dry-run writes nothing and shows the changes, and
// that a second run with the same inputs writes nothing.
func TestDryRunAndRerun(t *testing.T) {
	root := t.TempDir()
	env, args := startCase(t, "03-dnsip-nomaxpods-extraargs", root)
	code, stdout, stderr := run(t, env, "", append(args, "--dry-run")...)
	if code != 0 {
		t.Fatalf("dry run: exit %d: %s", code, stderr)
	}
	if files := tree(t, root); len(files) != 0 {
		t.Errorf("dry run wrote %d files", len(files))
	}
	for _, want := range []string{"+++ b/etc/kubernetes/kubelet/kubelet-config.json", "+    \"172.20.0.10\"", "# systemd: nothing (--no-restart)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("dry run output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "BEGIN CERTIFICATE") {
		t.Error("dry run output shows the CA")
	}

	if code, _, stderr := run(t, env, "", args...); code != 0 {
		t.Fatalf("first run: exit %d: %s", code, stderr)
	}
	first := tree(t, root)
	code, _, stderr = run(t, env, "", args...)
	if code != 0 || !strings.Contains(stderr, "every file already up to date") || strings.Contains(stderr, "\twrote\t") {
		t.Errorf("second run: exit %d, want no writes:\n%s", code, stderr)
	}
	testtools.CompareTrees(t, tree(t, root), first)

	// Without extra args the stale 30-kubelet-extra-args.conf goes (bootstrap.sh kept it).
	var noExtra []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--kubelet-extra-args" {
			i++
			continue
		}
		noExtra = append(noExtra, args[i])
	}
	code, _, stderr = run(t, env, "", noExtra...)
	if code != 0 || !strings.Contains(stderr, "removed") {
		t.Fatalf("third run: exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(root, "etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("30-kubelet-extra-args.conf still there: %v", err)
	}
}

// TestBlackboxLocalCluster runs the built binary with bootstrap.sh's Outposts flags on
// both image profiles and compares the tree with testdata/blackbox/<case>: the
// bootstrap kubeconfig whose token names the cluster ID (aws-iam-authenticator on
// AL2, aws eks get-token on AL2023), the client-certificate kubeconfig, and
// --bootstrap-kubeconfig. The API server is https://localhost, which this machine's
// resolver answers from its /etc/hosts; the node's /etc/hosts must then map
// localhost to each of those addresses, once, also after a second run.
func TestBlackboxLocalCluster(t *testing.T) {
	addrs, err := net.DefaultResolver.LookupHost(t.Context(), "localhost")
	if err != nil || len(addrs) == 0 {
		t.Skipf("localhost does not resolve here (%v)", err)
	}
	const seed = "127.0.0.1\tlocalhost\n"
	wantHosts := seed
	for _, a := range addrs {
		if a != "127.0.0.1" {
			wantHosts += netip.MustParseAddr(a).String() + "\tlocalhost\t# eksboot: local cluster API server\n"
		}
	}
	for _, profile := range []string{"al2", "al2023"} {
		name := "20-local-cluster-" + profile
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			env, args := startCase(t, "01-m5large-usw2-vpc192", root)
			if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, "etc/hosts"), []byte(seed), 0o644); err != nil {
				t.Fatal(err)
			}
			args = append(args, "--image-profile", profile, "--apiserver-endpoint", "https://localhost",
				"--enable-local-outpost", "true", "--cluster-id", "51eaebb5-7e52-4e71-baba-e98a6314b10e")
			for range 2 { // the second run is a reboot: nothing changes
				code, _, stderr := run(t, env, "", args...)
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				got := tree(t, root)
				if h := got["etc/hosts 0644"]; h != wantHosts {
					t.Errorf("/etc/hosts:\n%q\nwant\n%q", h, wantHosts)
				}
				delete(got, "etc/hosts 0644") // the machine's resolver decides it
				wantDir := filepath.Join(blackboxDir, name)
				if *update {
					writeTree(t, wantDir, got)
				}
				testtools.CompareTrees(t, got, tree(t, wantDir))
			}
		})
	}
}
