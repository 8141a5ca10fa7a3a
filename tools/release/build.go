package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// archNames are the RPM and DEB names of each architecture (nfpm maps GOARCH to
// them); the tarballs keep GOARCH's.
var archNames = map[string]struct{ rpm, deb string }{
	"amd64": {"x86_64", "amd64"},
	"arm64": {"aarch64", "arm64"},
}

// ldflags are the linker's flags of every binary: no symbol table and no DWARF
// (make build's), no build ID (it would hash the inputs' paths on another
// toolchain; Go's own is reproducible, an empty one is plainly so), and the version
// for eksboot version and the manual page.
func ldflags(v version) string {
	return "-s -w -buildid= -X github.com/eksboot/eksboot/cli.Version=" + v.Tag()
}

// buildEnv is the environment of every go build: this process's, less what would
// make the binaries depend on the machine or the user (GOFLAGS, GOEXPERIMENT, the
// target and its level, cgo), plus the target.
func buildEnv(goos, goarch string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GOFLAGS", "GOEXPERIMENT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "CGO_ENABLED=0", "GOAMD64=v1", "GOARM64=v8.0")
	if goos != "" {
		env = append(env, "GOOS="+goos, "GOARCH="+goarch)
	}
	return env
}

// goBuild builds pkg of the repository into out: -trimpath, so that no path of the
// checkout is in the binary, and -buildvcs=true, so that eksboot version names the
// commit (its time too, not the build's).
func goBuild(o options, env []string, out, pkg string, tags ...string) error {
	args := []string{"build", "-trimpath", "-buildvcs=true", "-ldflags", ldflags(o.version), "-o", out}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = o.repo
	cmd.Env = env
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(cmd.Args[1:], " "), err, b)
	}
	return nil
}

// buildBinaries builds the node's eksboot (-tags node, as make build) and
// eksboot-render for linux/arch into dir.
func buildBinaries(o options, arch, dir string) error {
	env := buildEnv("linux", arch)
	if err := goBuild(o, env, filepath.Join(dir, "eksboot"), "./cmd/eksboot", "node"); err != nil {
		return err
	}
	return goBuild(o, env, filepath.Join(dir, "eksboot-render"), "./cmd/eksboot-render")
}

// buildDocs writes what make man writes into dir: eksboot(8) and the completion
// scripts, from an eksboot built for this machine with the release's version (the
// page's header names it, and the commit's date).
func buildDocs(o options, dir string) error {
	host := filepath.Join(dir, "eksboot-host")
	if err := goBuild(o, buildEnv("", ""), host, "./cmd/eksboot"); err != nil {
		return err
	}
	defer func() { _ = os.Remove(host) }()
	for file, args := range map[string][]string{
		"eksboot.8":               {"man"},
		"completion/eksboot.bash": {"completion", "bash"},
		"completion/_eksboot":     {"completion", "zsh"},
		"completion/eksboot.fish": {"completion", "fish"},
	} {
		out, err := exec.Command(host, args...).Output()
		if err != nil {
			return fmt.Errorf("eksboot %s: %w", strings.Join(args, " "), err)
		}
		p := filepath.Join(dir, file)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, out, 0o644); err != nil {
			return err
		}
	}
	return nil
}
