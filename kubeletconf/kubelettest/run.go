package kubelettest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Accepted is the kubelet's line that Run takes for "every configuration check
// passed": the first line of syncLoop, the last step of Kubelet.Run, in every minor
// 1.34-1.38 (see the package doc).
const Accepted = "Starting kubelet main sync loop"

// statusCall is the fake runtime's log line of a Status call (updateRuntimeUp).
const statusCall = "cri: /runtime.v1.RuntimeService/Status OK"

// DefaultTimeout bounds a run whose context has no deadline.
const DefaultTimeout = 3 * time.Minute

// Kubelet is a real kubelet binary.
type Kubelet struct {
	Path    string // the binary
	Version string // what --version says after "Kubernetes ", e.g. "v1.38.0-beta.0"
	Minor   int    // 38 for 1.38
}

// Open runs path --version and returns the kubelet.
func Open(path string) (Kubelet, error) {
	out, err := exec.Command(path, "--version").CombinedOutput()
	if err != nil {
		return Kubelet{}, fmt.Errorf("%s --version: %v: %s", path, err, out)
	}
	m := regexp.MustCompile(`^Kubernetes (v1\.([0-9]+)\.\S+)`).FindStringSubmatch(strings.TrimSpace(string(out)))
	if m == nil {
		return Kubelet{}, fmt.Errorf("%s --version: %q, want Kubernetes v1.<minor>.<patch>", path, out)
	}
	minor, err := strconv.Atoi(m[2])
	if err != nil {
		return Kubelet{}, err
	}
	return Kubelet{Path: path, Version: m[1], Minor: minor}, nil
}

// Force is what a run adds to eksboot's files, to see what the kubelet says of it:
// one flag, a configuration field or a feature gate, as a user's input would carry it.
type Force struct {
	// Args are added at the end of the command line, after the unit's arguments (as
	// the last words of $KUBELET_EXTRA_ARGS).
	Args []string
	// Config is merged into the --config file as a JSON merge patch (RFC 7386): a
	// field replaces the file's, an object is merged, null removes.
	Config map[string]any
	// FeatureGates are set in the --config file's featureGates.
	FeatureGates map[string]bool
}

// Result is what the kubelet made of the files.
type Result struct {
	// Accepted: the kubelet passed every configuration check and ran its main loop
	// (Line is its Accepted line), until Run stopped it.
	Accepted bool
	// Line is the proof: the kubelet's Accepted line, or its refusal line (a panic,
	// the error it exits with, as it printed it).
	Line string
	// ExitCode is the kubelet's exit status when it refused.
	ExitCode int
	// Argv is the command line run, Argv[0] the unit's path to the kubelet; Env the
	// environment the unit gives it.
	Argv, Env []string
	// Edits are the test-only changes to what the unit would run, each said.
	Edits []string
	// CRICalls are the fake runtime's log, one call a line.
	CRICalls []string
	// Log is what the kubelet printed; LogDir holds it (kubelet.log, cri.log), kept
	// when the test fails.
	Log, LogDir string
}

// Run runs kubelet k as kubelet.service under root would run it (UnitCommand), with
// force added, in its own network and mount namespaces against the fake runtime
// fakeCRI (e2e/tools/fakecri), until it either refuses its input (exits) or passes
// every configuration check (logs Accepted, and has called the runtime's Status), and
// stops it there. An error means neither happened (a timeout: ctx's deadline, else
// DefaultTimeout) or the run could not be set up.
func Run(ctx context.Context, t testing.TB, k Kubelet, fakeCRI, root string, force Force) (Result, error) {
	t.Helper()
	var r Result
	uc, err := UnitCommand(root, "kubelet.service")
	if err != nil {
		return r, err
	}
	r.Argv, r.Env = uc.Argv, uc.Env
	if !hostCgroupV2() && k.Minor >= 31 {
		// failCgroupV1 defaults to true from 1.35; the flag exists from 1.31.
		r.Argv = append(r.Argv, "--fail-cgroupv1=false")
		r.Edits = append(r.Edits, "--fail-cgroupv1=false: this host runs cgroup v1, which a kubelet from 1.35 refuses by default")
	}
	r.Argv = append(r.Argv, force.Args...)
	for _, a := range force.Args {
		r.Edits = append(r.Edits, "forced flag "+a)
	}

	dir, err := os.MkdirTemp("", "kubelettest-")
	if err != nil {
		return r, err
	}
	r.LogDir = dir
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("kubelettest: the run's logs are kept in %s", dir)
			return
		}
		_ = os.RemoveAll(dir)
	})
	overrides := filepath.Join(dir, "overrides")
	if force.Config != nil || force.FeatureGates != nil {
		edit, err := forceConfig(root, overrides, r.Argv, force)
		if err != nil {
			return r, err
		}
		r.Edits = append(r.Edits, edit)
	}
	endpoint, err := runtimeEndpoint(root, r.Argv)
	if err != nil {
		return r, err
	}
	driver := cgroupDriver(root)

	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	logPath, criLog := filepath.Join(dir, "kubelet.log"), filepath.Join(dir, "cri.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return r, err
	}
	defer logFile.Close()
	mnt := filepath.Join(dir, "mnt")
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return r, err
	}
	args := []string{
		"--net", "--mount", "--propagation", "private", "--", "/bin/sh", "-euc", script, "kubelettest",
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	}
	args = append(append(args, r.Env...), r.Argv...)
	cmd := exec.Command("unshare", args...)
	cmd.Env = []string{
		"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
		"KT_MNT=" + mnt, "KT_ROOT=" + root, "KT_OVERRIDES=" + overrides,
		"KT_KUBELET=" + k.Path, "KT_EXEC=" + r.Argv[0],
		"KT_FAKECRI=" + fakeCRI, "KT_SOCKET=" + endpoint, "KT_DRIVER=" + driver, "KT_CRI_LOG=" + criLog,
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return r, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	stop := func() error {
		// The whole process group: the kubelet, the fake runtime, whatever the
		// kubelet started. The namespaces and their mounts go with the last of them.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		return <-done
	}

	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			r.Log, r.CRICalls = readLog(logPath), criCalls(criLog)
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the fake runtime
			if !strings.Contains(r.Log, execMarker) {
				return r, fmt.Errorf("kubelettest: the namespace was not set up (%v):\n%s", err, r.Log)
			}
			r.ExitCode = cmd.ProcessState.ExitCode()
			r.Line = refusalLine(r.Log[strings.Index(r.Log, execMarker)+len(execMarker):])
			if err == nil {
				r.Line = "exited 0, neither refusing nor running: " + r.Line
			}
			return r, nil
		case <-ctx.Done():
			werr := stop()
			r.Log, r.CRICalls = readLog(logPath), criCalls(criLog)
			return r, fmt.Errorf("kubelettest: kubelet %s neither refused nor reached %q within the deadline (stopped: %v); its last lines:\n%s",
				k.Version, Accepted, werr, lastLines(r.Log, 20))
		case <-tick.C:
			log := readLog(logPath)
			i := strings.Index(log, Accepted)
			if i < 0 || !strings.Contains(readLog(criLog), statusCall) {
				continue
			}
			_ = stop() // killed, as meant
			r.Log, r.CRICalls = readLog(logPath), criCalls(criLog)
			r.Accepted = true
			r.Line = klogMessage(lineAt(log, i))
			return r, nil
		}
	}
}

// execMarker is what the namespace's script prints just before it execs the kubelet.
const execMarker = "kubelettest: exec kubelet\n"

// script sets up the kubelet's namespaces (unshare gave it a network and a mount
// namespace of its own, private): the loopback interface up; a tmpfs at $KT_MNT
// holding the upper layer of an overlay of the host's root file system, so every
// write lands in the tmpfs; eksboot's root (and the forced files) copied over it, at
// their node paths; the kernel's /dev, a /proc whose sys/ is read-only, a sysfs of
// the new network namespace, read-only, with the host's cgroup hierarchies bound
// read-only under it, fresh tmpfs at /run and /tmp; the
// kubelet binary at the unit's path; the fake runtime on the kubelet's runtime socket.
// Then it execs the kubelet, chrooted, with the unit's environment only ("$@":
// assignments, then the command line).
const script = `
ip link set lo up
mount -t tmpfs -o mode=0700 kubelettest "$KT_MNT"
mkdir "$KT_MNT/upper" "$KT_MNT/work" "$KT_MNT/root"
R=$KT_MNT/root
mount -t overlay kubelettest -o "lowerdir=/,upperdir=$KT_MNT/upper,workdir=$KT_MNT/work" "$R"
tar -C "$KT_ROOT" --exclude=./proc --exclude=./sys --exclude=./dev -cf - . | tar -C "$R" -xf -
if [ -d "$KT_OVERRIDES" ]; then tar -C "$KT_OVERRIDES" -cf - . | tar -C "$R" -xf -; fi
mount --rbind /dev "$R/dev"
mount -t proc proc "$R/proc"
mount --bind "$R/proc/sys" "$R/proc/sys"
mount -o remount,bind,ro "$R/proc/sys"
mount -t sysfs -o ro sysfs "$R/sys"
mount --rbind /sys/fs/cgroup "$R/sys/fs/cgroup"
for m in $(awk -v r="$R/sys/fs/cgroup" '$5 == r || index($5, r "/") == 1 { print $5 }' /proc/self/mountinfo); do
  mount -o remount,bind,ro "$m"
done
mount -t tmpfs -o mode=0755 kubelettest "$R/run"
mount -t tmpfs -o mode=1777 kubelettest "$R/tmp"
mkdir -p "$R/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs"
mkdir -p "$R$(dirname "$KT_EXEC")"
[ -e "$R$KT_EXEC" ] || : >"$R$KT_EXEC"
mount --bind "$KT_KUBELET" "$R$KT_EXEC"
"$KT_FAKECRI" -listen "$R$KT_SOCKET" -cgroup-driver "$KT_DRIVER" >"$KT_CRI_LOG" 2>&1 &
i=0
until [ -S "$R$KT_SOCKET" ]; do
  i=$((i + 1))
  if [ $i -gt 300 ]; then echo "kubelettest: the fake runtime did not listen on $KT_SOCKET"; cat "$KT_CRI_LOG"; exit 1; fi
  sleep 0.1
done
echo "kubelettest: exec kubelet"
exec chroot "$R" /usr/bin/env -i "$@"
`

// forceConfig writes, under overrides, the kubelet's --config file of root with
// force's fields and gates merged in, and says what it did.
func forceConfig(root, overrides string, argv []string, force Force) (string, error) {
	p, err := flagValue(argv, "config")
	if err != nil {
		return "", fmt.Errorf("forcing configuration: the command line has no --config file")
	}
	b, err := os.ReadFile(filepath.Join(root, p))
	if err != nil {
		return "", err
	}
	var cfg map[string]any
	if err := json.Unmarshal(b, &cfg); err != nil {
		return "", fmt.Errorf("%s: %w", p, err)
	}
	patch := map[string]any{}
	for k, v := range force.Config {
		patch[k] = v
	}
	if force.FeatureGates != nil {
		gates := map[string]any{}
		for k, v := range force.FeatureGates {
			gates[k] = v
		}
		patch["featureGates"] = mergePatch(patch["featureGates"], gates)
	}
	cfg = mergePatch(cfg, patch).(map[string]any)
	out, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return "", err
	}
	dst := filepath.Join(overrides, p)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	pj, _ := json.Marshal(patch)
	return fmt.Sprintf("forced into %s: %s", p, pj), os.WriteFile(dst, out, 0o644)
}

// mergePatch applies patch to target as RFC 7386 says.
func mergePatch(target, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// runtimeEndpoint is the path of the kubelet's runtime socket: the last
// --container-runtime-endpoint, else the config file's containerRuntimeEndpoint.
func runtimeEndpoint(root string, argv []string) (string, error) {
	ep, err := flagValue(argv, "container-runtime-endpoint")
	if errors.Is(err, errNoFlag) {
		var cfg struct {
			ContainerRuntimeEndpoint string `json:"containerRuntimeEndpoint"`
		}
		if p, err := flagValue(argv, "config"); err == nil {
			if b, err := os.ReadFile(filepath.Join(root, p)); err == nil {
				_ = json.Unmarshal(b, &cfg)
			}
		}
		ep = cfg.ContainerRuntimeEndpoint
	}
	path, ok := strings.CutPrefix(ep, "unix://")
	if !ok || !filepath.IsAbs(path) {
		return "", fmt.Errorf("the kubelet's container runtime endpoint %q: want unix:///<path>", ep)
	}
	return path, nil
}

// cgroupDriver is what the node's containerd would answer the kubelet's
// RuntimeConfig call with, from the containerd config eksboot wrote: systemd when
// its runc runtime sets SystemdCgroup = true, else cgroupfs.
func cgroupDriver(root string) string {
	b, _ := os.ReadFile(filepath.Join(root, "etc/containerd/config.toml"))
	if regexp.MustCompile(`(?m)^\s*SystemdCgroup\s*=\s*true\b`).Match(b) {
		return "systemd"
	}
	return "cgroupfs"
}

func hostCgroupV2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

func readLog(p string) string {
	b, _ := os.ReadFile(p)
	return string(b)
}

func criCalls(p string) []string {
	var out []string
	for _, l := range strings.Split(readLog(p), "\n") {
		if strings.HasPrefix(l, "cri: ") {
			out = append(out, strings.TrimPrefix(l, "cri: "))
		}
	}
	return out
}

// lineAt is the line of s that holds byte i.
func lineAt(s string, i int) string {
	start := strings.LastIndexByte(s[:i], '\n') + 1
	end := strings.IndexByte(s[i:], '\n')
	if end < 0 {
		return s[start:]
	}
	return s[start : i+end]
}

// klogHeader is the prefix of a klog line: severity, date, time, thread, file:line.
var klogHeader = regexp.MustCompile(`^[IWEF][0-9]{4} [0-9:.]+ +[0-9]+ [^\]]+\] `)

// klogMessage is a log line without klog's header.
func klogMessage(l string) string {
	return klogHeader.ReplaceAllString(strings.TrimSpace(l), "")
}

// refusalLine finds, in what the kubelet printed before it exited, the line that
// says why: a panic, the error its command failed with, a fatal klog line; else the
// last error line, else the last line.
func refusalLine(log string) string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	for i, l := range lines {
		switch {
		case strings.HasPrefix(l, "panic: "), strings.HasPrefix(l, "Error: "),
			strings.Contains(l, `"command failed"`), strings.HasPrefix(l, "F") && klogHeader.MatchString(l):
			return klogMessage(joinMultiline(lines[i:]))
		}
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "E") && klogHeader.MatchString(lines[i]) {
			return klogMessage(joinMultiline(lines[i:]))
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}

// joinMultiline returns lines[0], and when it opens a klog multi-line value
// (key=< ... >), that value's lines joined into it with spaces.
func joinMultiline(lines []string) string {
	l := lines[0]
	if !strings.HasSuffix(l, "=<") {
		return l
	}
	var parts []string
	for _, next := range lines[1:] {
		if strings.HasPrefix(next, " >") {
			return strings.TrimSuffix(l, "<") + strings.Join(parts, " ") + strings.TrimPrefix(next, " >")
		}
		if t := strings.TrimSpace(next); t != "" {
			parts = append(parts, t)
		}
	}
	return l
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// Summary is one line for a test's log: the outcome and its line.
func (r Result) Summary() string {
	if r.Accepted {
		return "accepted: " + r.Line
	}
	return fmt.Sprintf("refused (exit %d): %s", r.ExitCode, r.Line)
}
