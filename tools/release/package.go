package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goreleaser/nfpm/v2"
	_ "github.com/goreleaser/nfpm/v2/deb" // registers the deb packager
	"github.com/goreleaser/nfpm/v2/files"
	_ "github.com/goreleaser/nfpm/v2/rpm" // registers the rpm packager
)

// file is one file of a release: where the packages put it on the node (node) and
// where the tarball has it, under its top folder (tarball); "" where it is not.
type file struct {
	src     string // "" for a folder
	node    string
	tarball string
	mode    fs.FileMode
}

// payload is what every artifact holds, from the repository, the binaries in bin
// and the docs in docs. The packages put each file where packer/install.sh puts it
// (the tests compare the two trees); the tarball holds install.sh's inputs, laid
// out so that it installs them: install.sh and image-lib.sh, the binaries, units/
// (UNITS_DIR, with the shim) and docs/ (DOCS_DIR).
func payload(repo, bin, docs string) []file {
	out := []file{
		{filepath.Join(bin, "eksboot"), "/usr/bin/eksboot", "eksboot", 0o755},
		{filepath.Join(bin, "eksboot-render"), "/usr/bin/eksboot-render", "eksboot-render", 0o755},
		{filepath.Join(repo, "assets/bootstrap.sh"), "/etc/eks/bootstrap.sh", "units/bootstrap.sh", 0o755},
	}
	for _, unit := range []string{"kubelet.service", "eksboot-config.service", "eksboot-run.service"} {
		out = append(out, file{filepath.Join(repo, "assets", unit), "/etc/systemd/system/" + unit, "units/" + unit, 0o644})
	}
	out = append(out,
		file{filepath.Join(docs, "eksboot.8"), "/usr/share/man/man8/eksboot.8", "docs/eksboot.8", 0o644},
		file{filepath.Join(docs, "completion/eksboot.bash"), "/usr/share/bash-completion/completions/eksboot", "docs/completion/eksboot.bash", 0o644},
		file{filepath.Join(docs, "completion/_eksboot"), "/usr/share/zsh/site-functions/_eksboot", "docs/completion/_eksboot", 0o644},
		file{filepath.Join(docs, "completion/eksboot.fish"), "/usr/share/fish/vendor_completions.d/eksboot.fish", "docs/completion/eksboot.fish", 0o644},
		// Where NodeConfig drop-ins baked into an image go.
		file{"", "/etc/eks/eksboot.d", "", 0o755},
		file{filepath.Join(repo, "packer/install.sh"), "", "install.sh", 0o755},
		file{filepath.Join(repo, "packer/image-lib.sh"), "", "image-lib.sh", 0o644},
	)
	if _, err := os.Stat(filepath.Join(repo, "LICENSE")); err == nil {
		out = append(out, file{filepath.Join(repo, "LICENSE"), licensePath, "LICENSE", 0o644})
	}
	return out
}

// licensePath stands for where each format keeps the licence: RPM's %license
// folder, Debian's copyright file.
const licensePath = "(licence)"

// Metadata of every package.
const (
	summary     = "Bootstraps an Amazon EKS worker node: bootstrap.sh and NodeConfig user data"
	description = `eksboot configures an EC2 instance as an Amazon EKS worker node at boot.
It reads IMDSv2, computes the kubelet's, containerd's and the system's files
from the user data, writes them atomically where they change, and restarts
the units that read them through systemd. /etc/eks/bootstrap.sh runs it with
bootstrap.sh's command line; eksboot-config.service and eksboot-run.service
run it with the NodeConfig of the user data. On Amazon Linux 2023 the package
disables nodeadm's units; removing it enables them again and restores the
image's bootstrap.sh and kubelet.service.`
	homepage = "https://github.com/eksboot/eksboot"
	// maintainer is free text to rpm and dpkg; the project publishes no address.
	maintainer = "eksboot (https://github.com/eksboot/eksboot)"
	// license is the packages' License field: NOASSERTION (SPDX: none stated) while
	// the repository has no LICENSE file.
	license = "NOASSERTION"
)

// scripts are the paths of the four package scripts writeScripts made.
type scripts struct{ preInstall, postInstall, preRemove, postRemove string }

// writeScripts makes the RPM's and DEB's scripts in dir: each is image-lib.sh's
// functions, then its part of packer/package-scripts/. Both formats run them
// with /bin/sh, chrooted into the root being installed, so root is "" (DPKG_ROOT
// is dpkg's root when told to run them outside it, --force-script-chrootless).
// rpm passes the number of versions installed after the step, dpkg an action;
// each part reads either.
func writeScripts(repo, dir string) (scripts, error) {
	lib, err := os.ReadFile(filepath.Join(repo, "packer/image-lib.sh"))
	if err != nil {
		return scripts{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return scripts{}, err
	}
	var s scripts
	for phase, p := range map[string]*string{"preinstall": &s.preInstall, "postinstall": &s.postInstall, "preremove": &s.preRemove, "postremove": &s.postRemove} {
		body, err := os.ReadFile(filepath.Join(repo, "packer/package-scripts", phase+".sh"))
		if err != nil {
			return scripts{}, err
		}
		*p = filepath.Join(dir, phase)
		text := "#!/bin/sh\n" +
			"# eksboot's " + phase + " script, made by tools/release from packer/image-lib.sh and\n" +
			"# packer/package-scripts/" + phase + ".sh.\n" +
			"# shellcheck disable=SC2034 # image-lib.sh's variables, not every script uses each\n" +
			"set -eu\numask 022\nprog=\"eksboot " + phase + "\"\nroot=${DPKG_ROOT:-}\nroot=${root%/}\n\n" +
			string(lib) + "\n" + string(body)
		if err := os.WriteFile(*p, []byte(text), 0o755); err != nil {
			return scripts{}, err
		}
	}
	return s, nil
}

// artifactName is the file name of format for arch: the RPM's and the DEB's
// conventional names (eksboot-0.3.0-1.x86_64.rpm, eksboot_0.3.0-1_amd64.deb), the
// tarball's eksboot-0.3.0-linux-amd64.tar.gz.
func artifactName(o options, format, arch string) (string, error) {
	if format == "tar.gz" {
		return tarballTop(o, arch) + ".tar.gz", nil
	}
	p, err := nfpm.Get(format)
	if err != nil {
		return "", err
	}
	return p.ConventionalFileName(packageInfo(o, arch, nil, scripts{})), nil
}

// packageInfo is the packages' metadata and contents for arch.
func packageInfo(o options, arch string, contents files.Contents, s scripts) *nfpm.Info {
	return nfpm.WithDefaults(&nfpm.Info{
		Name:          "eksboot",
		Arch:          arch,
		Platform:      "linux",
		Version:       o.version.Package(),
		VersionSchema: "none", // as it is: nfpm's SemVer parsing would move the build part
		Release:       "1",
		Section:       "admin",
		Priority:      "optional",
		Maintainer:    maintainer,
		Description:   description,
		Vendor:        "eksboot",
		Homepage:      homepage,
		License:       license,
		MTime:         o.epoch,
		Overridables: nfpm.Overridables{
			Contents: contents,
			Umask:    0o022,
			Scripts:  nfpm.Scripts{PreInstall: s.preInstall, PostInstall: s.postInstall, PreRemove: s.preRemove, PostRemove: s.postRemove},
			RPM:      nfpm.RPM{Summary: summary, BuildHost: "eksboot-release", Packager: maintainer},
		},
	})
}

// writePackage writes the format's package for arch as o.out/name with nfpm. Every
// file is root's, with its mode, dated o.epoch; so is the package (its build time;
// RPM's build host is fixed too).
func writePackage(o options, name, format, arch string, payload []file, s scripts) error {
	var contents files.Contents
	for _, f := range payload {
		if f.node == "" {
			continue
		}
		info := &files.ContentFileInfo{Owner: "root", Group: "root", Mode: f.mode, MTime: o.epoch}
		switch {
		case f.src == "":
			contents = append(contents, &files.Content{Destination: f.node, Type: files.TypeDir, FileInfo: info})
		case f.node == licensePath:
			contents = append(contents,
				&files.Content{Source: f.src, Destination: "/usr/share/licenses/eksboot/LICENSE", Type: files.TypeRPMLicense, Packager: "rpm", FileInfo: info},
				&files.Content{Source: f.src, Destination: "/usr/share/doc/eksboot/copyright", Packager: "deb", FileInfo: info})
		default:
			contents = append(contents, &files.Content{Source: f.src, Destination: f.node, FileInfo: info})
		}
	}
	p, err := nfpm.Get(format)
	if err != nil {
		return err
	}
	info := packageInfo(o, arch, contents, s)
	return writeFile(filepath.Join(o.out, name), func(w io.Writer) error { return p.Package(info, w) })
}

// writeFile writes path through a temporary file renamed into place.
func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".release-*")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }()
	if err := write(f); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// tarballTop is the tarball's one folder: eksboot-VERSION-linux-ARCH.
func tarballTop(o options, arch string) string {
	return "eksboot-" + o.version.Package() + "-linux-" + arch
}

// writeTarball writes o.out/name: the folder tarballTop with the payload's tarball
// files, in name order, each root's, with its mode and dated o.epoch; the gzip
// header has no name and no time.
func writeTarball(o options, name, arch string, payload []file) error {
	return writeFile(filepath.Join(o.out, name), func(w io.Writer) error {
		return tarball(w, tarballTop(o, arch), payload, o.epoch)
	})
}

// tarball writes the tar.gz of payload under top to w.
func tarball(w io.Writer, top string, payload []file, mtime time.Time) error {
	entries := map[string]file{top: {mode: 0o755}}
	for _, f := range payload {
		if f.tarball == "" {
			continue
		}
		name := top + "/" + f.tarball
		entries[name] = f
		for d := filepath.Dir(name); d != top; d = filepath.Dir(d) {
			entries[d] = file{mode: 0o755}
		}
	}
	gz, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(gz)
	for _, name := range slices.Sorted(maps.Keys(entries)) {
		f := entries[name]
		h := &tar.Header{Name: name, Mode: int64(f.mode), ModTime: mtime, Uname: "root", Gname: "root", Format: tar.FormatUSTAR}
		var data []byte
		if f.src == "" {
			h.Typeflag, h.Name = tar.TypeDir, name+"/"
		} else {
			if data, err = os.ReadFile(f.src); err != nil {
				return err
			}
			h.Typeflag, h.Size = tar.TypeReg, int64(len(data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return errors.Join(tw.Close(), gz.Close())
}

// writeSums writes SHA256SUMS into out: "HASH  NAME" for each of names, in name
// order, as sha256sum -c reads it.
func writeSums(out string, names []string) error {
	var b strings.Builder
	for _, name := range slices.Sorted(slices.Values(names)) {
		data, err := os.ReadFile(filepath.Join(out, name))
		if err != nil {
			return err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return writeFile(filepath.Join(out, "SHA256SUMS"), func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}
