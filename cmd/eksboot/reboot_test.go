package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/testtools"
)

// hostileNodeConfigs are NodeConfig user data that a hostile or careless launch
// template could carry, each with what the first boot must do: refuse (exit 1, the
// line naming want) or succeed, after which the next boot must write nothing.
func hostileNodeConfigs(t *testing.T) []struct{ name, spec, want string } {
	t.Helper()
	deepFlow := func(d int) string { return strings.Repeat("{a: ", d) + "1" + strings.Repeat("}", d) }
	wide := func(n int) string { // a list of n numbers, 3 bytes each, 57 levels down
		return strings.Repeat("{a: ", 56) + "[" + strings.Repeat("1, ", n) + "1]" + strings.Repeat("}", 56)
	}
	servers := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("10.%d.%d.%d", i/65536, i/256%256, i%256)
		}
		return "[" + strings.Join(s, ", ") + "]"
	}
	envVars := func(n, size int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "        V%d: %s\n", i, strings.Repeat("v", size))
		}
		return b.String()
	}
	return []struct{ name, spec, want string }{
		{"deep TOML, 3,000 dotted levels", "  containerd:\n    config: |\n      " + strings.Repeat("a.", 3000) + "x = 1\n", "spec.containerd.config: nested more than 64 levels deep (line 1)"},
		{"deep TOML, 100,000 dotted levels", "  containerd:\n    config: |\n      " + strings.Repeat("a.", 100_000) + "x = 1\n", "spec.containerd.config: nested more than 64 levels deep (line 1)"},
		{"deep TOML, 3,000 table headers", "  containerd:\n    config: |\n      [" + strings.Repeat("a.", 2999) + "b]\n      x = 1\n", "spec.containerd.config: nested more than 64 levels deep (line 1)"},
		{"TOML at 60 levels", "  containerd:\n    config: |\n      " + strings.Repeat("a.", 59) + "x = 1\n", ""},
		{"deep base runtime spec, 2,500 levels", "  containerd:\n    baseRuntimeSpec: " + deepFlow(2500) + "\n", "spec.containerd.baseRuntimeSpec: nested more than 64 levels deep"},
		{"wide base runtime spec, 60 levels down", "  containerd:\n    baseRuntimeSpec: " + wide(60_000) + "\n", "spec.containerd.baseRuntimeSpec: /etc/containerd/base-runtime-spec.json would be "},
		{"base runtime spec at 60 levels", "  containerd:\n    baseRuntimeSpec: " + wide(10) + "\n", ""},
		{"deep kubelet config, 2,500 levels", "  kubelet:\n    config:\n      featureGates: " + deepFlow(2500) + "\n", "spec.kubelet.config: nested more than 64 levels deep"},
		{"huge environment variable, 200 KiB", "  instance:\n    environment:\n      kubelet:\n" + envVars(1, 200<<10), "spec.instance.environment.kubelet.V0: 204803 bytes, more than the 131071 a variable may have"},
		{"large environment, 7 x 120 KiB", "  instance:\n    environment:\n      kubelet:\n" + envVars(7, 120<<10), ""},
		{"1,000 nameservers", "  instance:\n    network:\n      nameservers: " + servers(1000) + "\n", "spec.instance.network.nameservers: 1000 addresses, more than the 256 systemd-resolved takes"},
		{"256 nameservers", "  instance:\n    network:\n      nameservers: " + servers(256) + "\n", ""},
		{"nameserver zone with lines of its own", "  instance:\n    network:\n      nameservers: [\"fe80::1%eth0\\nDNSSEC=no\\nDNSOverTLS=yes\"]\n", "spec.instance.network.nameservers[0]: control character U+000A"},
		{"nameserver zone with a second server", "  instance:\n    network:\n      nameservers: [\"fe80::1%eth0 8.8.8.8#dns.google\"]\n", `spec.instance.network.nameservers[0]: "fe80::1%eth0 8.8.8.8#dns.google": zone "eth0 8.8.8.8#dns.google": want an interface name`},
	}
}

// TestHostileInputsBootTwice boots a node twice through `eksboot init` (the
// binary, the fake IMDS serving the user data on 127.0.0.1) with each hostile
// NodeConfig: the first boot refuses it (exit 1, one line naming the field,
// nothing written) or configures the node, and then the second boot converges
// (exit 0, nothing written): what eksboot writes it reads back. make test prints
// each outcome.
func TestHostileInputsBootTwice(t *testing.T) {
	sample, err := os.ReadFile("../../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	if err != nil {
		t.Fatal(err)
	}
	head, _, ok := strings.Cut(string(sample), "  kubelet:\n")
	if !ok {
		t.Fatal("the sample has no spec.kubelet")
	}
	for _, tc := range hostileNodeConfigs(t) {
		t.Run(tc.name, func(t *testing.T) {
			userData := head + tc.spec
			var gz bytes.Buffer
			zw := gzip.NewWriter(&gz)
			_, _ = zw.Write([]byte(userData))
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			inst := imdstest.DefaultInstance()
			inst.UserData = gz.String() // launch templates gzip what is larger than 16 KB
			srv, err := imdstest.NewServer(inst)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = srv.Close() })
			root := t.TempDir()
			boot := func() (int, string, map[string]string) {
				code, _, stderr := run(t, nil, "", "init", "--root", root, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL())
				return code, stderr, tree(t, root)
			}
			size := fmt.Sprintf("%d bytes of NodeConfig, %d gzipped", len(userData), gz.Len())
			code, stderr, first := boot()
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			last := lines[len(lines)-1]
			if tc.want != "" {
				if code != 1 || !strings.Contains(last, tc.want) || len(first) != 0 {
					t.Fatalf("first boot: exit %d, %d files written, last line %.300q; want exit 1, nothing written and %q", code, len(first), last, tc.want)
				}
				t.Logf("outcome: %s (%s): the first boot refuses it, exit 1, nothing written: %.200s", tc.name, size, last)
				return
			}
			if code != 0 {
				t.Fatalf("first boot: exit %d\n%.2000s", code, stderr)
			}
			largest, largestPath := 0, ""
			for p, body := range first {
				if len(body) > largest {
					largest, largestPath = len(body), p
				}
			}
			written := inodes(t, root)
			code, stderr, second := boot()
			if code != 0 {
				t.Fatalf("second boot: exit %d\n%.2000s", code, stderr)
			}
			testtools.CompareTrees(t, second, first)
			for p, ino := range inodes(t, root) {
				if written[p] != ino { // every write is a rename of a new file
					t.Errorf("the second boot rewrote %s", p)
				}
			}
			t.Logf("outcome: %s (%s): the first boot writes %d files (the largest %s, %d bytes), the second converges: exit 0, nothing written",
				tc.name, size, len(first), strings.Fields(filepath.ToSlash(largestPath))[0], largest)
		})
	}
}

// inodes maps every file under root to its inode number.
func inodes(t *testing.T, root string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = info.Sys().(*syscall.Stat_t).Ino
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
