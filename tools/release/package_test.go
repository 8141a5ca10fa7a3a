package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// sources writes a payload's source files into a new folder with the given mode
// and modification time on disk, which the artifacts must not show.
func sources(t *testing.T, mode os.FileMode, mtime time.Time) []file {
	t.Helper()
	dir := t.TempDir()
	var payload []file
	for i, f := range []file{
		{node: "/usr/bin/eksboot", tarball: "eksboot", mode: 0o755},
		{node: "/etc/systemd/system/eksboot-run.service", tarball: "units/eksboot-run.service", mode: 0o644},
		{node: "/etc/eks/eksboot.d", mode: 0o755},
		{tarball: "install.sh", mode: 0o755},
	} {
		if f.node != "/etc/eks/eksboot.d" {
			f.src = filepath.Join(dir, strings.Repeat("x", i+1))
			if err := os.WriteFile(f.src, []byte("content "+f.tarball+"\n"), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(f.src, mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(f.src, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		payload = append(payload, f)
	}
	return payload
}

var epoch = time.Date(2026, 12, 1, 12, 27, 44, 0, time.UTC)

// TestTarballDependsOnlyOnContent: two tarballs of the same content, from files of
// other modes and times on disk, are the same bytes, and every entry is root's,
// with the payload's mode and dated the epoch, under one folder.
func TestTarballDependsOnlyOnContent(t *testing.T) {
	var out [2]bytes.Buffer
	for i, src := range [][]file{sources(t, 0o600, time.Now()), sources(t, 0o777, time.Unix(0, 0))} {
		if err := tarball(&out[i], "eksboot-0.3.0-linux-amd64", src, epoch); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out[0].Bytes(), out[1].Bytes()) {
		t.Fatal("the same content gave two tarballs")
	}
	gz, err := gzip.NewReader(&out[0])
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("gzip header: name %q, time %v, want neither", gz.Name, gz.ModTime)
	}
	tr := tar.NewReader(gz)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "root" || h.Gname != "root" || !h.ModTime.Equal(epoch) {
			t.Errorf("%s: %d:%d %s:%s %v, want root's, dated %v", h.Name, h.Uid, h.Gid, h.Uname, h.Gname, h.ModTime, epoch)
		}
		got = append(got, h.Name+" "+os.FileMode(h.Mode).String())
	}
	want := []string{
		"eksboot-0.3.0-linux-amd64/ -rwxr-xr-x",
		"eksboot-0.3.0-linux-amd64/eksboot -rwxr-xr-x",
		"eksboot-0.3.0-linux-amd64/install.sh -rwxr-xr-x",
		"eksboot-0.3.0-linux-amd64/units/ -rwxr-xr-x",
		"eksboot-0.3.0-linux-amd64/units/eksboot-run.service -rw-r--r--",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("entries:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPackagesDependOnlyOnContent: an RPM and a DEB written twice from files of
// other modes and times on disk are the same bytes, and rpm and dpkg-deb read
// their version, files, owners, modes and times as given.
func TestPackagesDependOnlyOnContent(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	s, err := writeScripts(repo, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v := mustDescribe(t, "v0.3.0-4-g0123456789ab")
	for _, format := range []string{"rpm", "deb"} {
		t.Run(format, func(t *testing.T) {
			var got [2][]byte
			var name string
			for i, src := range [][]file{sources(t, 0o600, time.Now()), sources(t, 0o777, time.Unix(0, 0))} {
				o := options{out: t.TempDir(), version: v, epoch: epoch}
				if name, err = artifactName(o, format, "amd64"); err != nil {
					t.Fatal(err)
				}
				if err := writePackage(o, name, format, "amd64", src, s); err != nil {
					t.Fatal(err)
				}
				if got[i], err = os.ReadFile(filepath.Join(o.out, name)); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got[0], got[1]) {
				t.Fatalf("the same content gave two %s packages", format)
			}
			p := filepath.Join(t.TempDir(), name)
			if err := os.WriteFile(p, got[0], 0o644); err != nil {
				t.Fatal(err)
			}
			var cmds [][]string
			var want string
			switch format {
			case "rpm":
				if name != "eksboot-0.3.0+4.g0123456789ab-1.x86_64.rpm" {
					t.Errorf("name %s", name)
				}
				requireTool(t, "rpm")
				cmds = [][]string{
					{"rpm", "-qp", "--queryformat", "%{NAME} %{VERSION} %{RELEASE} %{ARCH} %{BUILDTIME} %{BUILDHOST}\n", p},
					{"rpm", "-qp", "--queryformat", "[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILEMTIMES} %{FILENAMES}\n]", p},
				}
				want = "eksboot 0.3.0+4.g0123456789ab 1 x86_64 1796128064 eksboot-release\n" +
					"drwxr-xr-x root root 1796128064 /etc/eks/eksboot.d\n" +
					"-rw-r--r-- root root 1796128064 /etc/systemd/system/eksboot-run.service\n" +
					"-rwxr-xr-x root root 1796128064 /usr/bin/eksboot\n"
			case "deb":
				if name != "eksboot_0.3.0+4.g0123456789ab-1_amd64.deb" {
					t.Errorf("name %s", name)
				}
				requireTool(t, "dpkg-deb")
				cmds = [][]string{
					{"dpkg-deb", "--showformat", "${Package} ${Version} ${Architecture}\n", "--show", p},
					{"sh", "-c", `dpkg-deb --fsys-tarfile "$1" | tar -tv --full-time`, "sh", p},
				}
				want = "eksboot 0.3.0+4.g0123456789ab-1 amd64\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./etc/\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./etc/eks/\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./etc/eks/eksboot.d/\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./etc/systemd/\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./etc/systemd/system/\n" +
					"-rw-r--r-- root/root        34 2026-12-01 12:27:44 ./etc/systemd/system/eksboot-run.service\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./usr/\n" +
					"drwxr-xr-x root/root         0 2026-12-01 12:27:44 ./usr/bin/\n" +
					"-rwxr-xr-x root/root        16 2026-12-01 12:27:44 ./usr/bin/eksboot\n"
			}
			var b strings.Builder
			for _, c := range cmds {
				cmd := exec.Command(c[0], c[1:]...)
				cmd.Env = append(os.Environ(), "TZ=UTC")
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("%s: %v", strings.Join(c, " "), err)
				}
				b.Write(out)
			}
			if b.String() != want {
				t.Errorf("%s reads:\n%s\nwant\n%s", format, b.String(), want)
			}
		})
	}
}

// TestScriptsPassShellcheck: each package script, image-lib.sh and its part, as the
// packages carry it, is clean POSIX sh to shellcheck.
func TestScriptsPassShellcheck(t *testing.T) {
	requireTool(t, "shellcheck")
	s, err := writeScripts("../..", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{s.preInstall, s.postInstall, s.preRemove, s.postRemove} {
		if out, err := exec.Command("shellcheck", p).CombinedOutput(); err != nil {
			t.Errorf("shellcheck %s: %v\n%s", filepath.Base(p), err, out)
		}
	}
}
