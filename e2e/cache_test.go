//go:build e2e

package e2e

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The node root: Debian's packages of a node, the ones the issue names (systemd,
// dbus, cloud-init, containerd, runc, iptables, ca-certificates), iproute2 (the
// box's units give the node its address with ip) and the CNI plugins (bridge,
// host-local, loopback: the pods' network inside the box). Debian's containerd is
// 1.6, the AL2 boxes'; the AL2023 boxes get containerd 2 (containerd2Binaries).
const suite = "bookworm"

var rootPackages = []string{"systemd", "systemd-sysv", "dbus", "cloud-init", "containerd", "runc", "iptables", "ca-certificates", "iproute2", "containernetworking-plugins"}

// kubernetes is one Kubernetes release the box runs: its build-only module under
// tools/ and the binaries built from it.
type kubernetes struct {
	version string   // the k8s.io/kubernetes version, without "v"
	module  string   // folder under tools/
	cmds    []string // packages built into binaries named after their last element
	etcd    bool     // also build etcd (go.etcd.io/etcd/server/v3) at the version k8s requires
	// toolchain is the Go toolchain of this build alone (GOTOOLCHAIN), when the
	// release needs a newer Go than the project's; the go command fetches it from the
	// module proxy.
	toolchain string
}

// The kubelet at the oldest and the newest minor that EKS supports and the module
// proxy serves (1.34 and 1.37); the API server, kubectl and etcd once, at the newer
// one (the version-skew policy lets a kubelet three minors older join).
var (
	k8sOld = kubernetes{version: "1.34.4", module: "k8s1.34", cmds: []string{"k8s.io/kubernetes/cmd/kubelet"}}
	k8sNew = kubernetes{version: "1.37.2", module: "k8s1.37", etcd: true, cmds: []string{
		"k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kubectl",
	}}
	// k8sNext is the next minor's pre-release, the newest the module proxy serves: its
	// kubelet, and its API server for the box that runs that kubelet (a kubelet newer
	// than its API server is outside the version-skew policy). It needs Go 1.27, for
	// this build alone; and tools/k8s1.38 replaces sigs.k8s.io/iptables-wrappers, which
	// the proxy refuses, with a stand-in of its own (tools/k8s1.38/iptables-wrappers:
	// the kubelet finds no iptables and skips its hint and firewall chains; a test
	// kubelet's, never shipped).
	k8sNext = kubernetes{version: "1.38.0-beta.0", module: "k8s1.38", toolchain: "go1.27.3", cmds: []string{
		"k8s.io/kubernetes/cmd/kubelet", "k8s.io/kubernetes/cmd/kube-apiserver",
	}}
)

// cacheDir is where built roots and binaries are kept between runs.
func cacheDir() string {
	return cmp.Or(os.Getenv("EKSBOOT_E2E_CACHE"), "/var/cache/eksboot-e2e")
}

// lockCache takes an exclusive lock on the cache for the whole run: two runs on
// one machine would build the same entries at once.
func lockCache() (func(), error) {
	if err := os.MkdirAll(cacheDir(), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(cacheDir(), "lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// key is a short digest of the inputs of a cache entry: a change to any of them
// makes a new entry.
func key(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:%s\n", len(p), p)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// cached returns the folder of the cache entry name, building it with build into
// a temporary folder first when it is not there; build must fill the folder it
// is given. A half-built entry is never used: it is renamed into place whole.
func cached(t *testing.T, name string, build func(dir string) error) (string, error) {
	dir := filepath.Join(cacheDir(), name)
	if _, err := os.Stat(dir); err == nil {
		t.Logf("cache: %s", dir)
		return dir, nil
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	if err := build(tmp); err != nil {
		return "", fmt.Errorf("cache: build %s: %w", name, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	t.Logf("cache: built %s in %s", dir, time.Since(start).Round(time.Second))
	return dir, nil
}

// aptSources is the sources list mmdebstrap reads: the machine's own Debian
// sources, so the root comes from the mirror apt already uses.
func aptSources() (path, text string, err error) {
	for _, p := range []string{"/etc/apt/sources.list.d/debian.sources", "/etc/apt/sources.list"} {
		if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "debian") {
			return p, string(b), nil
		}
	}
	return "", "", fmt.Errorf("no Debian apt sources in /etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list")
}

// baseRoot returns the cached node root, built with mmdebstrap when its package
// list, suite, options or apt sources changed.
func baseRoot(t *testing.T) (string, error) {
	sources, text, err := aptSources()
	if err != nil {
		return "", err
	}
	args := []string{
		"--variant=minbase", "--include=" + strings.Join(rootPackages, ","),
		// The machine's apt settings for the mirror's old Release files.
		`--aptopt=Acquire::Check-Valid-Until "false"`, `--aptopt=Acquire::Check-Date "false"`,
		"--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*",
		"--dpkgopt=path-exclude=/usr/share/locale/*",
	}
	name := "root-" + suite + "-" + key(append(args, suite, text)...)
	return cached(t, name, func(dir string) error {
		// mmdebstrap wants to create the target itself.
		if err := os.Remove(dir); err != nil {
			return err
		}
		cmd := exec.Command("mmdebstrap", append(args, suite, dir, sources)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("mmdebstrap: %w\n%s", err, tail(string(out), 40))
		}
		return nil
	})
}

// k8sBinaries returns the folder with the release's binaries, built from its
// module under tools/ when its go.mod, go.sum, build flags or Go changed.
func k8sBinaries(t *testing.T, k kubernetes) (string, error) {
	minor := strings.Split(k.version, ".")[1]
	// kubelet --version must say the release: install.sh and eksboot read it.
	ldflags := "-s -w -X k8s.io/component-base/version.gitVersion=v" + k.version +
		" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=" + minor +
		" -X k8s.io/component-base/version.gitTreeState=clean"
	var extra []string
	if k.etcd {
		extra = []string{"etcd", "go.etcd.io/etcd/server/v3"}
	}
	return moduleBinaries(t, "k8s-"+k.version, k.module, k.toolchain, ldflags, k.cmds, extra,
		strings.Join(k.cmds, " "), fmt.Sprint(k.etcd))
}

// fakeCRIBinaryDir returns the folder holding fakecri, the container runtime of
// kubeletconf/kubelettest (tools/fakecri, a module of its own), built once and
// cached as fakecri-<key> (its go.mod, go.sum, main.go, the flags and Go). make e2e
// lists it in last-run.env, for the real-kubelet tests .ci/run runs.
func fakeCRIBinaryDir(t *testing.T) (string, error) {
	main, err := os.ReadFile(filepath.Join("tools", "fakecri", "main.go"))
	if err != nil {
		return "", err
	}
	return moduleBinaries(t, "fakecri", "fakecri", "", "-s -w", []string{"."}, nil, string(main))
}

// containerd2Module is the build-only module of containerd 2 (tools/containerd2).
const containerd2Module = "containerd2"

// containerd2Binaries returns a folder with containerd 2 built from its Go module
// (github.com/containerd/containerd/v2 at the version tools/containerd2/go.mod
// requires, CGO_ENABLED=0): containerd, containerd-shim-runc-v2 and ctr, with
// `containerd --version` saying the module's version. It is built once and cached
// as containerd-<version>-<key> (rebuilt when that module's go.mod or go.sum, the
// build flags or Go change), under the cache lock that prepare takes; any e2e test
// may call it (the boxes of the AL2023 profile, a test of containerd's snapshotters).
func containerd2Binaries(t *testing.T) (string, error) {
	version, err := moduleVersion(containerd2Module, "github.com/containerd/containerd/v2")
	if err != nil {
		return "", err
	}
	pkg := "github.com/containerd/containerd/v2"
	ldflags := "-s -w -X " + pkg + "/version.Version=" + strings.TrimPrefix(version, "v")
	cmds := []string{pkg + "/cmd/containerd", pkg + "/cmd/containerd-shim-runc-v2", pkg + "/cmd/ctr"}
	return moduleBinaries(t, "containerd-"+strings.TrimPrefix(version, "v"), containerd2Module, "", ldflags, cmds, nil)
}

// moduleVersion is the version of module that the build-only module under tools/
// requires.
func moduleVersion(dir, module string) (string, error) {
	b, err := os.ReadFile(filepath.Join("tools", dir, "go.mod"))
	if err != nil {
		return "", err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(l), "require ")); len(f) >= 2 && f[0] == module {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("tools/%s/go.mod requires no %s", dir, module)
}

// moduleBinaries returns the cache entry prefix-<key> holding cmds built from the
// build-only module under tools/ (binaries named after the packages' last element),
// and extra's binary (name, package) when given, with the Go toolchain named (the
// project's when ""); the key covers the module's go.mod and go.sum, the flags, Go's
// version and keyParts.
func moduleBinaries(t *testing.T, prefix, module, toolchain, ldflags string, cmds, extra []string, keyParts ...string) (string, error) {
	modDir, err := filepath.Abs(filepath.Join("tools", module))
	if err != nil {
		return "", err
	}
	gomod, err := os.ReadFile(filepath.Join(modDir, "go.mod"))
	if err != nil {
		return "", err
	}
	gosum, err := os.ReadFile(filepath.Join(modDir, "go.sum"))
	if err != nil {
		return "", err
	}
	var env []string
	if toolchain != "" {
		env = []string{"GOTOOLCHAIN=" + toolchain}
	}
	gv := exec.Command("go", "version")
	gv.Dir, gv.Env = modDir, append(os.Environ(), env...)
	goVersion, err := gv.Output()
	if err != nil {
		return "", fmt.Errorf("go version (%s): %w", toolchain, err)
	}
	name := prefix + "-" + key(append([]string{string(gomod), string(gosum), ldflags, string(goVersion)}, keyParts...)...)
	return cached(t, name, func(dir string) error {
		run := func(args ...string) error {
			cmd := exec.Command("go", args...)
			cmd.Dir = modDir
			cmd.Env = append(append(os.Environ(), env...), "CGO_ENABLED=0", "GOFLAGS=-mod=readonly")
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, tail(string(out), 40))
			}
			return nil
		}
		if err := run(append([]string{"build", "-trimpath", "-ldflags", ldflags, "-o", dir + "/"}, cmds...)...); err != nil {
			return err
		}
		if len(extra) == 2 {
			return run("build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, extra[0]), extra[1])
		}
		return nil
	})
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
