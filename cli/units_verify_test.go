package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/internal/testtools"
	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// requireSystemdAnalyze returns systemd-analyze's path; it skips the test when the
// tool is missing, unless EKSBOOT_REQUIRE_SYSTEMD=1 (CI), which fails it.
func requireSystemdAnalyze(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("systemd-analyze")
	if err != nil {
		if os.Getenv(systemdtest.RequireEnv) == "1" {
			t.Fatalf("systemd-analyze is not installed and %s=1", systemdtest.RequireEnv)
		}
		t.Skip("systemd-analyze is not installed")
	}
	return p
}

// TestUnitsVerifyOnEveryProfile runs `systemd-analyze verify` on every unit eksboot
// installs, with its drop-ins, for each image profile: what a bootstrap run writes
// under /etc/systemd/system (kubelet.service and its drop-ins, sys-fs-bpf.mount where
// the image's systemd needs it, containerd's drop-ins) and the boot units that
// packer/install.sh installs. Any line systemd-analyze prints fails the test: systemd
// ignores a bad setting with a warning, and starts the unit without it.
func TestUnitsVerifyOnEveryProfile(t *testing.T) {
	analyze := requireSystemdAnalyze(t)
	metadata, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	defer metadata.Close()
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testtools.SelfSignedCA(t)}))
	for _, tc := range []struct {
		name, profile string
		image         func(t *testing.T, root string)
		wantBPFUnit   bool
	}{
		// A bare root: bootstrap.sh's AL2 layout, no bpf file system mounted.
		{"al2", "al2", func(*testing.T, string) {}, true},
		{"al2023", "al2023", func(t *testing.T, root string) { writeAL2023(t, root, true) }, false},
		// A container or a kernel where nothing mounted bpffs: today's systemd still
		// refuses the unit, so it must not be written.
		{"al2023 without bpffs", "al2023", func(t *testing.T, root string) { writeAL2023(t, root, false) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			tc.image(t, root)
			var stdout, stderr bytes.Buffer
			args := []string{
				"eksboot", "bootstrap", "verify-units", "--b64-cluster-ca", ca,
				"--apiserver-endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com",
				"--imds-endpoint", metadata.URL(), "--kubelet-version", "1.33.5", "--image-profile", tc.profile,
				"--kubelet-extra-args", "--node-labels=eksboot.dev/verify=true", "--graceful-shutdown",
				"--root", root, "--no-restart",
			}
			if code := Main(args, &stdout, &stderr); code != 0 {
				t.Fatalf("bootstrap: exit %d\n%s", code, stderr.String())
			}
			installed := filepath.Join(root, "etc/systemd/system")
			_, err := os.Stat(filepath.Join(installed, "sys-fs-bpf.mount"))
			if got := err == nil; got != tc.wantBPFUnit {
				t.Errorf("sys-fs-bpf.mount installed: %v, want %v (the plan writes it when the profile's WantsBPFMountUnit says so)", got, tc.wantBPFUnit)
			}
			verifyUnits(t, analyze, installed, tc.wantBPFUnit)
		})
	}
}

// writeAL2023 lays out the AL2023 image fixture in root; bpffs says whether its
// /proc/mounts lists the BPF file system.
func writeAL2023(t *testing.T, root string, bpffs bool) {
	t.Helper()
	if err := (imagefixture.AL2023{KubeletVersion: "v1.33.5-eks-113cf36"}).Write(root); err != nil {
		t.Fatal(err)
	}
	if bpffs {
		return
	}
	p := filepath.Join(root, "proc/mounts")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.Contains(l, " bpf ") {
			kept = append(kept, l)
		}
	}
	if err := os.WriteFile(p, []byte(strings.Join(kept, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// verifyUnits verifies the units of installed (a node's /etc/systemd/system) and
// packer/install.sh's boot units in a root of their own: the machine's systemd units
// below (the targets and services they order against), a stand-in of the image's
// containerd.service, and a stand-in executable (/bin/true) for each command of a
// unit that the root lacks (verify checks that ExecStart's binary exists; this test
// checks the units, not the image's binaries).
func verifyUnits(t *testing.T, analyze, installed string, bpfUnit bool) {
	t.Helper()
	v := t.TempDir()
	etc := filepath.Join(v, "etc/systemd/system")
	lib := filepath.Join(v, "usr/lib/systemd/system")
	copyTree(t, "/usr/lib/systemd/system", lib)
	copyTree(t, installed, etc)
	for name, b := range map[string][]byte{"eksboot-config.service": assets.EksbootConfigService, "eksboot-run.service": assets.EksbootRunService} {
		writeFile(t, filepath.Join(etc, name), b)
	}
	if _, err := os.Stat(filepath.Join(lib, "containerd.service")); err != nil {
		writeFile(t, filepath.Join(lib, "containerd.service"), []byte("[Unit]\nDescription=stand-in of the image's containerd\n\n[Service]\nExecStart=/usr/bin/containerd\n"))
	}
	if bpfUnit {
		// sys-fs-bpf.mount is for Amazon Linux 2's systemd (219); this machine's
		// refuses any mount unit of /sys/fs/bpf, its API file system. Everything else
		// of the unit is verified under another mount point.
		b, err := os.ReadFile(filepath.Join(etc, "sys-fs-bpf.mount"))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(etc, "mnt-bpf.mount"), bytes.ReplaceAll(b, []byte("Where=/sys/fs/bpf"), []byte("Where=/mnt/bpf")))
		if err := os.Remove(filepath.Join(etc, "sys-fs-bpf.mount")); err != nil {
			t.Fatal(err)
		}
	}
	units := unitNames(t, etc)
	for _, u := range units {
		stubCommands(t, v, u)
	}
	t.Logf("systemd-analyze verify %s", strings.Join(units, " "))
	cmd := exec.Command(analyze, append([]string{"verify", "--man=no", "--root=" + v}, units...)...)
	out, err := cmd.CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// unitNames lists the units of a unit folder: its unit files and the units its
// drop-in folders (NAME.d) change.
func unitNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".d")
		switch filepath.Ext(name) {
		case ".service", ".mount", ".socket", ".timer", ".target", ".path":
			seen[name] = true
		}
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// stubCommands puts /bin/true in the root v for each command of unit (its file and
// drop-ins, in /etc or /usr/lib) that v lacks.
func stubCommands(t *testing.T, v, unit string) {
	t.Helper()
	var files []string
	for _, d := range []string{"etc/systemd/system", "usr/lib/systemd/system"} {
		files = append(files, filepath.Join(v, d, unit))
		drops, _ := filepath.Glob(filepath.Join(v, d, unit+".d", "*.conf"))
		files = append(files, drops...)
	}
	stub, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		s := bufio.NewScanner(bytes.NewReader(b))
		for s.Scan() {
			key, value, ok := strings.Cut(strings.TrimSpace(s.Text()), "=")
			if !ok || !strings.HasPrefix(key, "Exec") {
				continue
			}
			cmd := strings.TrimLeft(strings.Fields(value + " x")[0], "-@:+!|")
			if !strings.HasPrefix(cmd, "/") {
				continue
			}
			p := filepath.Join(v, cmd)
			if _, err := os.Stat(p); err == nil {
				continue
			}
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, stub, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// copyTree copies the regular files and links of src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		switch {
		case info.IsDir():
			return os.MkdirAll(to, 0o755)
		case info.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case info.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(to, b, 0o644)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, p string, b []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
