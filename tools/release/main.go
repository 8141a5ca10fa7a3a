// Command release is make package: it builds eksboot and eksboot-render for each
// architecture from the checkout it runs in, and writes, for each, an RPM, a DEB
// and a tarball, then SHA256SUMS, into one folder. Two runs on the same commit from
// clean checkouts write the same bytes (see reproducible below).
//
//	release [-out DIR] [-arch amd64,arm64] [-formats rpm,deb,tar.gz] package
//	release [-out DIR] [-arch ...] [-formats ...] names
//	release version
//
// names prints the paths package writes (make ami finds the RPM with it), version
// the version eksboot version shows (make build passes it to the linker). Every
// package carries the same version without its v (Package).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "dist", "the folder for the packages, the tarballs and SHA256SUMS (relative: to the checkout's top)")
	arches := fs.String("arch", "amd64,arm64", "the architectures, as GOARCH names: amd64, arm64")
	formats := fs.String("formats", "rpm,deb,tar.gz", "what to write for each architecture: rpm, deb, tar.gz")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: release [flags] package | names | version\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || !slices.Contains([]string{"package", "names", "version"}, fs.Arg(0)) {
		fs.Usage()
		return 2
	}
	repo, err := git("", "rev-parse", "--show-toplevel")
	if err != nil {
		fmt.Fprintf(stderr, "release: %v (it builds a git checkout of eksboot)\n", err)
		return 1
	}
	v, err := gitVersion(repo)
	if err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	if fs.Arg(0) == "version" {
		fmt.Fprintln(stdout, v.Tag())
		return 0
	}
	o := options{repo: repo, out: *out, version: v}
	if !filepath.IsAbs(o.out) {
		o.out = filepath.Join(repo, o.out)
	}
	for a := range strings.SplitSeq(*arches, ",") {
		if _, ok := archNames[a]; !ok {
			fmt.Fprintf(stderr, "release: -arch %q: want amd64 or arm64\n", a)
			return 2
		}
		o.arches = append(o.arches, a)
	}
	for f := range strings.SplitSeq(*formats, ",") {
		if !slices.Contains(allFormats, f) {
			fmt.Fprintf(stderr, "release: -formats %q: want rpm, deb or tar.gz\n", f)
			return 2
		}
		o.formats = append(o.formats, f)
	}
	if fs.Arg(0) == "names" {
		for _, arch := range o.arches {
			for _, format := range o.formats {
				name, err := artifactName(o, format, arch)
				if err != nil {
					fmt.Fprintf(stderr, "release: %v\n", err)
					return 1
				}
				fmt.Fprintln(stdout, filepath.Join(o.out, name))
			}
		}
		return 0
	}
	if o.epoch, err = sourceDateEpoch(repo); err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	written, err := release(o, stdout)
	if err != nil {
		fmt.Fprintf(stderr, "release: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "release: %s: %d files and SHA256SUMS in %s\n", v.Tag(), len(written), o.out)
	return 0
}

// git runs git in dir and returns its output without the trailing newline.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// gitVersion is the checkout's version: from the last release tag before HEAD
// (git describe), else untagged.
func gitVersion(repo string) (version, error) {
	status, err := git(repo, "status", "--porcelain")
	if err != nil {
		return version{}, err
	}
	dirty := status != ""
	tags, err := git(repo, "tag", "--list", "--merged", "HEAD", "v[0-9]*")
	if err != nil {
		return version{}, err
	}
	if tags == "" {
		count, err := git(repo, "rev-list", "--count", "HEAD")
		if err != nil {
			return version{}, err
		}
		n, err := strconv.Atoi(count)
		if err != nil {
			return version{}, fmt.Errorf("git rev-list --count: %q: %w", count, err)
		}
		hash, err := git(repo, "rev-parse", "HEAD")
		if err != nil {
			return version{}, err
		}
		if len(hash) < 12 {
			return version{}, fmt.Errorf("git rev-parse HEAD: %q", hash)
		}
		return untagged(n, hash[:12], dirty), nil
	}
	describe, err := git(repo, "describe", "--tags", "--long", "--abbrev=12", "--match", "v[0-9]*", "HEAD")
	if err != nil {
		return version{}, err
	}
	return parseDescribe(describe, dirty)
}

// sourceDateEpoch is the time every file of every artifact is dated: the
// SOURCE_DATE_EPOCH of the environment (reproducible-builds.org's convention), else
// HEAD's commit time, so that a rebuild of the commit gives the same bytes.
func sourceDateEpoch(repo string) (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		var err error
		if s, err = git(repo, "log", "-1", "--format=%ct", "HEAD"); err != nil {
			return time.Time{}, err
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q: %w", s, err)
	}
	return time.Unix(n, 0).UTC(), nil
}

// options are a run's inputs.
type options struct {
	repo, out string
	version   version
	epoch     time.Time
	arches    []string
	formats   []string
}

var allFormats = []string{"rpm", "deb", "tar.gz"}

// release builds and writes everything, then SHA256SUMS, and returns the names of
// the files it wrote (SHA256SUMS aside).
func release(o options, stdout io.Writer) ([]string, error) {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return nil, err
	}
	if err := removeOld(o.out); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "eksboot-release-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(work) }()
	docs := filepath.Join(work, "docs")
	if err := buildDocs(o, docs); err != nil {
		return nil, err
	}
	scripts, err := writeScripts(o.repo, filepath.Join(work, "scripts"))
	if err != nil {
		return nil, err
	}
	var written []string
	for _, arch := range o.arches {
		bin := filepath.Join(work, arch)
		if err := buildBinaries(o, arch, bin); err != nil {
			return nil, err
		}
		files := payload(o.repo, bin, docs)
		for _, format := range o.formats {
			name, err := artifactName(o, format, arch)
			if err == nil {
				if format == "tar.gz" {
					err = writeTarball(o, name, arch, files)
				} else {
					err = writePackage(o, name, format, arch, files, scripts)
				}
			}
			if err != nil {
				return nil, fmt.Errorf("%s for %s: %w", format, arch, err)
			}
			fmt.Fprintf(stdout, "release: wrote %s\n", filepath.Join(o.out, name))
			written = append(written, name)
		}
	}
	return written, writeSums(o.out, written)
}

// removeOld removes what an earlier run wrote into out, so that the folder holds
// one release, the one SHA256SUMS names.
func removeOld(out string) error {
	var errs []error
	for _, pattern := range []string{"eksboot-*.rpm", "eksboot_*.deb", "eksboot-*.tar.gz", "SHA256SUMS"} {
		m, err := filepath.Glob(filepath.Join(out, pattern))
		errs = append(errs, err)
		for _, p := range m {
			errs = append(errs, os.Remove(p))
		}
	}
	return errors.Join(errs...)
}
