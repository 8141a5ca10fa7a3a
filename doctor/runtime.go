package doctor

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
)

const runtimeGroup = "runtime"

// Node paths the runtime checks read.
const (
	KubeletConfigPath = "/etc/kubernetes/kubelet/kubelet-config.json"
	kubeletDropIns    = kubeletconf.KubeletDropInDir
	cniConfDir        = "/etc/cni/net.d"
	defaultCRISocket  = "/run/containerd/containerd.sock"
	nodefsPath        = "/var/lib/kubelet"
	imagefsPath       = "/var/lib/containerd"
)

// kubeletDefaultEviction is the kubelet's evictionHard when its configuration sets
// none (the EKS AMI's kubelet-config.json sets these).
// An array of pairs, not a map: static data, where a map is built at every start.
var kubeletDefaultEviction = [...]struct{ signal, threshold string }{
	{"nodefs.available", "10%"},
	{"nodefs.inodesFree", "5%"},
	{"imagefs.available", "15%"},
}

// kubeletConfig is the part of kubelet-config.json the checks read.
type kubeletConfig struct {
	MaxPods                  int               `json:"maxPods"`
	EvictionHard             map[string]string `json:"evictionHard"`
	ContainerRuntimeEndpoint string            `json:"containerRuntimeEndpoint"`
}

// checkRuntime: the units, the CRI socket, the CNI configuration, the disks, max pods.
func (d *run) checkRuntime() {
	d.checkUnit("containerd.service", "containerd")
	d.checkUnit("kubelet.service", "kubelet")
	var kc kubeletConfig
	b, err := d.env.Files.ReadFileLimit(KubeletConfigPath, maxFileRead)
	if err == nil {
		err = json.Unmarshal(b, &kc)
	}
	if err != nil {
		d.add(runtimeGroup, "runtime.kubelet-config", Fail, fmt.Sprintf("%s: %v", KubeletConfigPath, err), "Run eksboot again: it writes "+KubeletConfigPath+".")
	} else {
		kc = d.effectiveKubeletConfig(b, kc)
	}
	d.checkCRI(kc.ContainerRuntimeEndpoint)
	d.checkCNI()
	d.checkDisks(kc.EvictionHard)
	d.checkMaxPods(kc.MaxPods)
}

// configDirFlag is the kubelet's --config-dir in its unit's drop-ins.
var configDirFlag = lazy.Regexp{Expr: `--config-dir[= ]([^ '"]+)`}

// nodeFiles reads doctor's Files as the bootstrap reads a node's, through
// maxFileRead.
type nodeFiles struct{ Files }

func (f nodeFiles) ReadFile(p string) ([]byte, error) { return f.ReadFileLimit(p, maxFileRead) }

// effectiveKubeletConfig: when the kubelet runs with --config-dir (its unit's
// drop-ins say so), the configuration it runs with is kubelet-config.json (main)
// with the directory's drop-ins merged over it in the kubelet's order;
// runtime.kubelet-config shows it, and the checks read it (kc is main's, returned
// when there are no drop-ins).
func (d *run) effectiveKubeletConfig(main []byte, kc kubeletConfig) kubeletConfig {
	dir := ""
	names, _ := d.env.Files.ReadDir(kubeletDropIns)
	for _, n := range names {
		b, err := d.env.Files.ReadFileLimit(kubeletDropIns+"/"+n, 1<<20)
		if err != nil {
			continue
		}
		if m := configDirFlag.Get().FindAllStringSubmatch(string(b), -1); m != nil {
			dir = m[len(m)-1][1]
		}
	}
	if dir == "" {
		return kc
	}
	if dir != kubeletconf.ConfigDropInDir {
		d.add(runtimeGroup, "runtime.kubelet-config", Warn, fmt.Sprintf("the kubelet runs with --config-dir %s; eksboot reads drop-ins in %s only", d.quote(dir), kubeletconf.ConfigDropInDir), "")
		return kc
	}
	dropIns, err := bootstrap.ReadKubeletDropIns(nodeFiles{d.env.Files})
	if err != nil {
		d.add(runtimeGroup, "runtime.kubelet-config", Fail, err.Error(),
			"Fix or remove that drop-in: the kubelet exits on a drop-in it cannot load.")
		return kc
	}
	if len(dropIns) == 0 {
		return kc
	}
	var cfg kubeletconf.KubeletConfiguration
	if err := json.Unmarshal(main, &cfg); err != nil {
		return kc
	}
	eff, err := kubeletconf.Effective(&cfg, dropIns)
	var merged []byte
	if err == nil {
		merged, err = kubeletconf.Marshal(eff)
	}
	if err != nil {
		d.add(runtimeGroup, "runtime.kubelet-config", Fail, fmt.Sprintf("%s and its drop-ins: %v", KubeletConfigPath, err), "Fix or remove the drop-in: the kubelet exits on it.")
		return kc
	}
	var order []string
	for _, di := range dropIns {
		order = append(order, strings.TrimPrefix(di.Path, kubeletconf.ConfigDropInDir+"/"))
	}
	r := d.add(runtimeGroup, "runtime.kubelet-config", OK, fmt.Sprintf("%s with %d drop-ins of %s over it, in this order: %s (below: the configuration the kubelet runs with, flags aside)",
		KubeletConfigPath, len(dropIns), kubeletconf.ConfigDropInDir, strings.Join(order, ", ")), "")
	r.Detail = string(merged)
	var out kubeletConfig
	if err := json.Unmarshal(merged, &out); err != nil {
		return kc
	}
	return out
}

// kubeletUnit reads the kubelet's unit state once (its start bounds the journal).
func (d *run) kubeletUnit() (UnitState, error) {
	ctx, cancel := d.checkCtx()
	defer cancel()
	u, err := d.env.Units.Unit(ctx, "kubelet.service")
	if err == nil {
		d.facts.kubeletSince = u.ActiveEnter
	}
	return u, err
}

// checkUnit: the unit is active and running; else why, from its journal.
func (d *run) checkUnit(unit, name string) {
	ctx, cancel := d.checkCtx()
	u, err := d.env.Units.Unit(ctx, unit)
	cancel()
	check := "runtime." + name
	if err != nil {
		d.addOrCut(runtimeGroup, check, Warn, fmt.Sprintf("%s: state unreadable over D-Bus: %v", unit, err), "Run eksboot doctor as root on the node (it asks systemd over the system bus).")
		return
	}
	if unit == "kubelet.service" {
		d.facts.kubeletSince = u.ActiveEnter
	}
	state := fmt.Sprintf("%s (%s)", u.ActiveState, u.SubState)
	if u.LoadState == "not-found" {
		d.add(runtimeGroup, check, Fail, unit+" does not exist", "Use an EKS-optimized image, or install "+name+" and its unit.")
		return
	}
	if u.ActiveState == "active" && u.SubState == "running" {
		ev := fmt.Sprintf("%s %s since %s", unit, state, u.ActiveEnter.UTC().Format(time.RFC3339))
		if u.NRestarts > 0 {
			ev += fmt.Sprintf(", restarted %d times", u.NRestarts)
		}
		if u.NRestarts >= 3 {
			why := d.lastFailure(unit)
			fix := "It has been restarting: read journalctl -u " + unit + " for why it exited."
			if what, ok := d.kubeletRefusal(why); ok && unit == "kubelet.service" {
				fix = refusalFix(what)
			}
			r := d.add(runtimeGroup, check, Warn, ev, fix)
			r.Detail = why
			return
		}
		d.add(runtimeGroup, check, OK, ev, "")
		return
	}
	ev := fmt.Sprintf("%s is %s, result %s, main process status %d, restarted %d times", unit, state, u.Result, u.ExecMainStatus, u.NRestarts)
	why := d.lastFailure(unit)
	if why != "" {
		ev += "; last error: " + clip(firstLine(why), 240)
	}
	fix := "Read journalctl -u " + unit + " -b for the whole story; the line above is its last error."
	if unit == "kubelet.service" {
		fix = "Read journalctl -u kubelet -b: an unknown flag or a bad kubelet-config.json stops it at once (see eksboot.files for hand edits), a missing containerd stops it later."
		if what, ok := d.kubeletRefusal(why); ok {
			fix = refusalFix(what)
		}
	}
	r := d.add(runtimeGroup, check, Fail, ev, fix)
	r.Detail = why
}

// failureLine recognises a line that says why a unit failed: journald priority err
// or worse, klog's E and F lines, logfmt's error and fatal levels, and systemd's
// own lines about the unit's process.
var failureLine = lazy.Regexp{Expr: `^[EF]\d{4} |level=(error|fatal)|Main process exited|Failed with result|failed to run Kubelet|command failed`}

// lastFailure is the unit's last journal line that says why it failed.
func (d *run) lastFailure(unit string) string {
	var entries []JournalEntry
	var err error
	if unit == "kubelet.service" {
		entries, err = d.kubeletJournal()
		if len(entries) == 0 { // it failed before this start: read it all
			ctx, cancel := d.checkCtx()
			entries, err = d.env.Journal.Entries(ctx, unit, journalLines)
			cancel()
		}
	} else {
		ctx, cancel := d.checkCtx()
		entries, err = d.env.Journal.Entries(ctx, unit, journalLines)
		cancel()
	}
	if err != nil {
		return ""
	}
	// The process's own last error is more telling than systemd's note of its exit.
	var systemd string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		if e.Priority >= 0 && e.Priority <= 3 || failureLine.Get().MatchString(e.Message) {
			if e.Identifier == "systemd" {
				if systemd == "" {
					systemd = e.Message
				}
				continue
			}
			line := e.Time.UTC().Format(time.RFC3339) + " " + clip(d.redact(e.Message), 400)
			if systemd != "" {
				line += "\n" + clip(d.redact(systemd), 200)
			}
			return line
		}
	}
	return clip(d.redact(systemd), 200)
}

// refusalFix is the kubelet check's fix when the kubelet refused what it was given.
func refusalFix(what string) string {
	return strings.ToUpper(what[:1]) + what[1:] + ": correct that input in the user data (or the file, if it was edited by hand) and run eksboot again; eksboot refuses, before it writes, the values it knows this kubelet refuses."
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// checkCRI calls the runtime's CRI Version over its socket.
func (d *run) checkCRI(endpoint string) {
	sock := strings.TrimPrefix(cmpOr(endpoint, "unix://"+defaultCRISocket), "unix://")
	hp, err := d.env.Files.Resolve(sock)
	if err != nil {
		d.add(runtimeGroup, "runtime.cri", Fail, err.Error(), "")
		return
	}
	ctx, cancel := d.checkCtx()
	defer cancel()
	v, err := d.env.CRI.Version(ctx, hp)
	if err != nil {
		d.addOrCut(runtimeGroup, "runtime.cri", Fail, fmt.Sprintf("the CRI socket %s does not answer: %v", sock, err),
			"Check containerd (runtime.containerd above) and that its config.toml enables the CRI plugin (eksboot's does).")
		return
	}
	d.add(runtimeGroup, "runtime.cri", OK, fmt.Sprintf("%s %s answers on %s (CRI %s)", v.RuntimeName, v.RuntimeVersion, sock, v.RuntimeAPIVersion), "")
}

// checkCNI: a CNI configuration exists (else the kubelet reports NetworkNotReady).
func (d *run) checkCNI() {
	names, err := d.env.Files.ReadDir(cniConfDir)
	var confs []string
	for _, n := range names {
		if strings.HasSuffix(n, ".conf") || strings.HasSuffix(n, ".conflist") || strings.HasSuffix(n, ".json") {
			confs = append(confs, n)
		}
	}
	if len(confs) > 0 {
		d.add(runtimeGroup, "runtime.cni", OK, fmt.Sprintf("CNI configuration in %s: %s", cniConfDir, strings.Join(confs, ", ")), "")
		return
	}
	ev := fmt.Sprintf("no CNI configuration in %s: the node stays NotReady (NetworkNotReady: cni plugin not initialized)", cniConfDir)
	if err != nil {
		ev += fmt.Sprintf(" (%v)", err)
	}
	fix := "The VPC CNI's aws-node pod writes it once the node has joined: check kubectl -n kube-system get pods -l k8s-app=aws-node -o wide for this node, and its logs."
	if since := d.facts.kubeletSince; !since.IsZero() && d.env.now().Sub(since) < d.o.CNIGrace {
		d.add(runtimeGroup, "runtime.cni", Warn, ev+fmt.Sprintf("; the kubelet started %s ago, aws-node may still be starting", d.env.now().Sub(since).Round(time.Second)), fix)
		return
	}
	d.add(runtimeGroup, "runtime.cni", Fail, ev, fix)
}

// checkDisks: free space and inodes of the kubelet's and containerd's file systems
// against the kubelet's hard eviction thresholds.
func (d *run) checkDisks(eviction map[string]string) {
	thresholds := map[string]string{}
	for _, e := range kubeletDefaultEviction {
		thresholds[e.signal] = e.threshold
	}
	if eviction != nil { // the kubelet takes its evictionHard whole
		thresholds = eviction
	}
	for _, fsys := range []struct{ name, path string }{{"nodefs", nodefsPath}, {"imagefs", imagefsPath}} {
		hp, err := d.env.Files.Resolve(fsys.path)
		if err != nil {
			continue
		}
		st, err := d.env.Statfs.Statfs(hp)
		check := "runtime.disk-" + fsys.name
		if err != nil {
			d.add(runtimeGroup, check, Warn, fmt.Sprintf("%s (%s): %v", fsys.name, fsys.path, err), "")
			continue
		}
		status, ev := OK, ""
		for _, kind := range []struct {
			key         string
			total, free uint64
			unit        string
		}{{fsys.name + ".available", st.Bytes, st.BytesFree, "bytes"}, {fsys.name + ".inodesFree", st.Inodes, st.InodesFree, "inodes"}} {
			if kind.total == 0 {
				continue
			}
			pct := float64(kind.free) * 100 / float64(kind.total)
			desc := fmt.Sprintf("%s free (%.0f%%)", human(kind.free, kind.unit), pct)
			limit, ok := threshold(thresholds[kind.key], kind.total)
			if ok {
				desc += fmt.Sprintf(", eviction below %s", thresholds[kind.key])
				switch {
				case kind.free < limit:
					status = Fail
				case float64(kind.free) < 1.5*float64(limit) && status == OK:
					status = Warn
				}
			}
			ev = joinNonEmpty(ev, desc)
		}
		ev = fmt.Sprintf("%s (%s): %s", fsys.name, fsys.path, ev)
		switch status {
		case Fail:
			d.add(runtimeGroup, check, Fail, ev+": the kubelet reports DiskPressure and evicts pods", "Free space (crictl rmi --prune removes unused images) or grow the volume.")
		case Warn:
			d.add(runtimeGroup, check, Warn, ev+": close to the eviction threshold", "Free space (crictl rmi --prune) or grow the volume before the kubelet starts evicting.")
		default:
			d.add(runtimeGroup, check, OK, ev, "")
		}
	}
}

// threshold is a kubelet eviction threshold ("10%" or a quantity "1Gi", "100k") of
// total, in the same unit.
func threshold(v string, total uint64) (uint64, bool) {
	if v == "" {
		return 0, false
	}
	if p, ok := strings.CutSuffix(v, "%"); ok {
		f, err := strconv.ParseFloat(p, 64)
		if err != nil {
			return 0, false
		}
		return uint64(f * float64(total) / 100), true
	}
	n, ok := kubeletconf.QuantityValue(v)
	return uint64(n), ok
}

func human(n uint64, unit string) string {
	if unit != "bytes" {
		return fmt.Sprintf("%d inodes", n)
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

func joinNonEmpty(a, b string) string {
	if a == "" {
		return b
	}
	return a + ", " + b
}

// maxPodsFlag is the kubelet's --max-pods in a drop-in.
var maxPodsFlag = lazy.Regexp{Expr: `--max-pods[= ]([0-9]+)`}

// checkMaxPods: max pods against the pod addresses of the instance type's ENIs.
func (d *run) checkMaxPods(fromConfig int) {
	max, source := fromConfig, KubeletConfigPath
	names, _ := d.env.Files.ReadDir(kubeletDropIns)
	for _, n := range names { // the kubelet takes the last --max-pods, and drop-ins are read in order
		b, err := d.env.Files.ReadFileLimit(kubeletDropIns+"/"+n, 1<<20)
		if err != nil {
			continue
		}
		if m := maxPodsFlag.Get().FindAllStringSubmatch(string(b), -1); m != nil {
			max, _ = strconv.Atoi(m[len(m)-1][1])
			source = kubeletDropIns + "/" + n
		}
	}
	t := d.facts.instanceType
	if t == "" {
		return // imds failed
	}
	if max == 0 {
		max, source = 110, "the kubelet's default"
	}
	info, ok := maxpods.Info(t)
	if !ok {
		d.add(runtimeGroup, "runtime.max-pods", Warn, fmt.Sprintf("max pods %d (%s); %s is not in eksboot's table, so its ENIs are not known", max, source, t), "")
		return
	}
	ips, err := maxpods.Classic(info)
	if err != nil {
		return
	}
	ev := fmt.Sprintf("max pods %d (%s); %s has %d ENIs of %d IPv4 addresses: %d pods with secondary IPs", max, source, t, info.ENIs, info.IPv4PerENI, ips)
	if max > ips {
		d.add(runtimeGroup, "runtime.max-pods", Warn, ev+fmt.Sprintf("; pods beyond %d stay ContainerCreating (failed to assign an IP address) unless the VPC CNI has prefix delegation", ips),
			fmt.Sprintf("Turn on prefix delegation (ENABLE_PREFIX_DELEGATION=true on aws-node, Nitro types) or bootstrap with max pods %d (eksboot max-pods --instance-type %s).", ips, t))
		return
	}
	d.add(runtimeGroup, "runtime.max-pods", OK, ev, "")
}
