package kubelettest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// The environment that names the programs: EKSBOOT_KUBELET a kubelet binary,
// EKSBOOT_FAKECRI the fake runtime (make e2e caches both and lists them in the cache's
// last-run.env; .ci/run hands them over). Without EKSBOOT_FAKECRI it is built from
// e2e/tools/fakecri.
const (
	KubeletEnv = "EKSBOOT_KUBELET"
	FakeCRIEnv = "EKSBOOT_FAKECRI"
)

// FromEnv returns the kubelet EKSBOOT_KUBELET names and the fake runtime, and skips
// the test when no kubelet is named. With one named, what the run needs must be
// there (root, unshare, mount, chroot, ip, tar): the test fails otherwise.
func FromEnv(t testing.TB) (Kubelet, string) {
	t.Helper()
	path := os.Getenv(KubeletEnv)
	if path == "" {
		t.Skipf("%s is not set (a kubelet binary; make e2e lists those it built in the cache's last-run.env)", KubeletEnv)
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s is set, but running a kubelet in namespaces of its own needs root", KubeletEnv)
	}
	for _, tool := range []string{"unshare", "mount", "chroot", "ip", "tar", "awk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is missing (apt-get install util-linux iproute2 coreutils tar gawk)", tool)
		}
	}
	k, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return k, FakeCRI(t)
}

var (
	fakeOnce sync.Once
	fakePath string
	fakeErr  error
)

// FakeCRI returns the fake runtime's binary: EKSBOOT_FAKECRI, else one built once
// per test process from e2e/tools/fakecri (its own module; go fetches its
// dependencies when the module cache lacks them).
func FakeCRI(t testing.TB) string {
	t.Helper()
	if p := os.Getenv(FakeCRIEnv); p != "" {
		return p
	}
	fakeOnce.Do(func() {
		_, file, _, ok := runtime.Caller(0)
		if !ok {
			fakeErr = os.ErrNotExist
			return
		}
		src := filepath.Join(filepath.Dir(file), "..", "..", "e2e", "tools", "fakecri")
		dir, err := os.MkdirTemp("", "kubelettest-fakecri-")
		if err != nil {
			fakeErr = err
			return
		}
		fakePath = filepath.Join(dir, "fakecri")
		cmd := exec.CommandContext(context.Background(), "go", "build", "-o", fakePath, ".")
		cmd.Dir = src
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			fakeErr = &buildError{err, strings.TrimSpace(string(out))}
		}
	})
	if fakeErr != nil {
		t.Fatalf("kubelettest: building e2e/tools/fakecri (or set %s): %v", FakeCRIEnv, fakeErr)
	}
	return fakePath
}

type buildError struct {
	err error
	out string
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }
