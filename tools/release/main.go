// Command release prints the version of the checkout it runs in, from its git tags:
//
//	release version
//
// prints the version eksboot version shows (make build passes it to the linker).
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: release version\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 || fs.Arg(0) != "version" {
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
	fmt.Fprintln(stdout, v.Tag())
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
