// Package kubesrc is what the kubelet table generators (kubeletconf/internal/flaggen,
// kubeletconf/internal/gategen) share: the k8s.io/kubernetes release read for each
// kubelet minor, and fetching a release's sources (and the modules it builds with)
// into the Go module cache, never into eksboot's go.mod: eksboot never links them.
package kubesrc

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
)

// Versions is the k8s.io/kubernetes release read for each kubelet minor, oldest
// first: the newest patch of the minor the Go module proxy serves, and for the minor
// after the newest release the newest pre-release. The proxy's version list of
// k8s.io/kubernetes is incomplete (it lists no 1.24-1.28 release and v1.29.6 as the
// newest 1.29), so the final patches of the minors that are out of support are
// written here from the Kubernetes release history and checked to download; the
// others are the newest the list shows. Moving a version changes the generated
// files, so the list is the generators' input, as go.mod is typegen's.
var Versions = []string{
	"v1.24.17",
	"v1.25.16",
	"v1.26.15",
	"v1.27.16",
	"v1.28.15",
	"v1.29.15",
	"v1.30.14",
	"v1.31.14",
	"v1.32.13",
	"v1.33.13",
	"v1.34.4",
	"v1.35.4",
	"v1.36.3",
	"v1.37.2",
	"v1.38.0-beta.0",
}

// Toolchain is the Go toolchain the go command runs as (GOTOOLCHAIN) to download a
// module whose go.mod needs a newer Go than the one running: k8s.io/kubernetes
// v1.38.0-beta.0 and its staging modules say go 1.27.0, and Go 1.26's `go mod
// download` refuses them. The sources are only parsed, never built.
const Toolchain = "go1.27.3"

// Minor returns the minor of a k8s.io/kubernetes version: 38 for "v1.38.0-beta.0".
func Minor(version string) (int, error) {
	v, err := parse(version)
	return v.minor, err
}

// Staging returns the version of the staging modules (k8s.io/component-base, ...)
// released with a k8s.io/kubernetes version: "v0.38.0-beta.0" for "v1.38.0-beta.0".
func Staging(version string) string {
	return "v0." + strings.TrimPrefix(version, "v1.")
}

// A semver is a v1.<minor>.<patch>[-<pre>] version.
type semver struct {
	minor, patch int
	pre          string // "" for a release
}

var semverRE = regexp.MustCompile(`^v1\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$`)

func parse(v string) (semver, error) {
	m := semverRE.FindStringSubmatch(v)
	if m == nil {
		return semver{}, fmt.Errorf("version %q: want v1.<minor>.<patch>[-<pre-release>]", v)
	}
	minor, _ := strconv.Atoi(m[1])
	patch, _ := strconv.Atoi(m[2])
	return semver{minor, patch, m[3]}, nil
}

// less reports whether a is older than b, by semantic versioning's precedence.
func (a semver) less(b semver) bool {
	if a.minor != b.minor {
		return a.minor < b.minor
	}
	if a.patch != b.patch {
		return a.patch < b.patch
	}
	switch {
	case a.pre == b.pre:
		return false
	case a.pre == "":
		return false
	case b.pre == "":
		return true
	}
	x, y := strings.Split(a.pre, "."), strings.Split(b.pre, ".")
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] == y[i] {
			continue
		}
		xn, xerr := strconv.Atoi(x[i])
		yn, yerr := strconv.Atoi(y[i])
		switch {
		case xerr == nil && yerr == nil:
			return xn < yn
		case xerr == nil:
			return true // numeric identifiers come first
		case yerr == nil:
			return false
		}
		return x[i] < y[i]
	}
	return len(x) < len(y)
}

// ListVersions returns the k8s.io/kubernetes versions the module proxy lists.
func ListVersions() ([]string, error) {
	cmd := exec.Command("go", "list", "-m", "-versions", "k8s.io/kubernetes")
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list -m -versions k8s.io/kubernetes: %w", err)
	}
	return strings.Fields(string(out))[1:], nil
}

// NewerServed returns an error naming the versions in listed that are newer than the
// version pinned for their minor: a newer patch of a release, or for a pinned
// pre-release any newer pre-release or the release itself, so that none is missed.
// Pre-releases of a pinned release's minor are not newer than it.
func NewerServed(pinned, listed []string) error {
	have := map[int]semver{}
	for _, v := range pinned {
		s, err := parse(v)
		if err != nil {
			return fmt.Errorf("pinned release: %w", err)
		}
		have[s.minor] = s
	}
	var newer []string
	for _, v := range listed {
		s, err := parse(v)
		if err != nil {
			continue
		}
		if h, ok := have[s.minor]; ok && h.less(s) && (s.pre == "" || h.pre != "") {
			newer = append(newer, v)
		}
	}
	if len(newer) > 0 {
		return fmt.Errorf("the module proxy serves newer versions than Versions pins: %s; move Versions in kubeletconf/internal/kubesrc/kubesrc.go", strings.Join(newer, ", "))
	}
	return nil
}

// Substitutes are the staging modules that the Go module proxy does not serve at a
// release's version (it answers 403 Forbidden: "This module version is not
// available"), by module@version, with the version read in their place: the newest
// patch below it that the proxy serves. The kubelet imports them for API types only
// (k8s.io/kube-scheduler's, through pkg/scheduler/framework); gategen reads their
// imports to walk the kubelet's import graph.
var Substitutes = map[string]string{
	"k8s.io/kube-scheduler@v0.31.14": "v0.31.13",
}

// StagingDownload is Download of a staging module at Staging(version), or at its
// substitute.
func StagingDownload(module, version string, offline bool) (string, error) {
	v := Staging(version)
	if s, ok := Substitutes[module+"@"+v]; ok {
		v = s
	}
	return Download(module, v, offline)
}

// ErrNoSources is returned (wrapped) by Download when offline and a module is not
// in the module cache.
var ErrNoSources = errors.New("not in the module cache")

// Download returns the module cache directory of module@version, downloading it
// unless offline. It runs outside any module so that no go.mod or go.sum changes.
// A module that needs a newer Go than the one running is downloaded by Toolchain.
func Download(module, version string, offline bool) (string, error) {
	dir, msg, err := download(module, version, offline, "")
	if err != nil && strings.Contains(msg, "requires go >= ") {
		dir, msg, err = download(module, version, offline, Toolchain)
	}
	if err == nil {
		return dir, nil
	}
	if offline {
		return "", fmt.Errorf("%s@%s is %w (%s)", module, version, ErrNoSources, msg)
	}
	return "", fmt.Errorf("go mod download %s@%s: %s", module, version, msg)
}

// download runs go mod download, as toolchain when it is not "", and returns the
// module's directory or the go command's message.
func download(module, version string, offline bool, toolchain string) (dir, msg string, err error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GO111MODULE=on", "GOFLAGS=-mod=mod")
	if toolchain != "" {
		cmd.Env = append(cmd.Env, "GOTOOLCHAIN="+toolchain)
	}
	if offline {
		cmd.Env = append(cmd.Env, "GOPROXY=off")
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var m struct{ Dir, Error string }
	jsonErr := json.Unmarshal(stdout.Bytes(), &m)
	if runErr == nil && jsonErr == nil && m.Dir != "" {
		return m.Dir, "", nil
	}
	msg = strings.TrimSpace(cmp.Or(m.Error, stderr.String()))
	if msg == "" {
		msg = fmt.Sprint(cmp.Or(runErr, jsonErr, errors.New("no directory")))
	}
	return "", msg, errors.New(msg)
}

// Requirement returns the version of module that go.mod requires (the replace
// directive's, when there is one).
func Requirement(goMod []byte, module string) (string, error) {
	re := regexp.MustCompile(`(?m)^\s*(?:require\s+|replace\s+)?` + regexp.QuoteMeta(module) + `\s+(?:=>\s+\S+\s+)?(v\S+)`)
	var last string
	for _, m := range re.FindAllSubmatch(goMod, -1) {
		last = string(m[1]) // a replace comes after the require
	}
	if last == "" {
		return "", fmt.Errorf("no requirement of %s", module)
	}
	return last, nil
}

// StagingModules returns the modules that a k8s.io/kubernetes go.mod replaces with
// its own staging folders (k8s.io/api, k8s.io/component-base, ...): published with
// each release as Staging(version).
func StagingModules(goMod []byte) []string {
	var mods []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(?:replace\s+)?(k8s\.io/[a-z0-9-]+)\s+=>\s+\./staging/`).FindAllSubmatch(goMod, -1) {
		mods = append(mods, string(m[1]))
	}
	return mods
}
