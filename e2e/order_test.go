//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// orderVariant is one way to boot a node for TestTimeToReady: its image and user
// data (a podBox), the order of eksboot's units and whether a script part is added
// to the user data.
type orderVariant struct {
	name string
	pb   podBox
	// nodeadm: the eksboot units get EKSBOOT_KUBELET_START=after-cloud-final from a
	// drop-in (eksboot-.service.d), which is nodeadm's order: the config phase
	// before cloud-init, the kubelet started by the run phase after cloud-final.
	nodeadm bool
	// script adds a user-data script part that records what it saw of the kubelet.
	script bool
}

// orderVariants: NodeConfig user data on AL2023 in both orders, the same with a
// script part (which keeps the kubelet after cloud-final), and bootstrap.sh user data
// on AL2 in both orders (where the bootstrap runs inside cloud-final by nature).
var orderVariants = []orderVariant{
	{name: "al2023 NodeConfig, eksboot's order", pb: podBoxes[1]},
	{name: "al2023 NodeConfig, nodeadm's order", pb: podBoxes[1], nodeadm: true},
	{name: "al2023 NodeConfig + script, eksboot's order", pb: podBoxes[1], script: true},
	{name: "al2 bootstrap.sh, eksboot's order", pb: podBoxes[3]},
	{name: "al2 bootstrap.sh, nodeadm's order", pb: podBoxes[3], nodeadm: true},
}

// scriptPart is the user-data script of the "+ script" variant: it records when it
// ran and the kubelet's state then.
const scriptPart = `--//
Content-Type: text/x-shellscript

#!/bin/sh
# make e2e: a user-data script, which cloud-final runs; the kubelet must not run yet.
{ date +%s.%N; systemctl is-active kubelet.service || :; } > /var/lib/e2e-script-saw 2>&1
`

// timelineSteps are the steps of a boot, in the order of the timeline's rows: from
// the moment the box's API server is ready, when the node's boot starts.
var timelineSteps = []string{
	"eksboot-config started", "eksboot-config done", "cloud-init-local done",
	"cloud-init (init stage) done", "containerd started", "containerd active", "cloud-config done", "cloud-final done", "eksboot-run done",
	"kubelet started", "Node registered", "Node Ready",
}

// bootTimes are one boot's steps, in seconds from the moment the box's API server
// was ready (clusterUp, from the box's start), and eksboot's own share: its units'
// run times and its steps (its journal's "step done ... took").
type bootTimes struct {
	clusterUp  float64
	at         map[string]float64
	ran        map[string]float64 // unit -> seconds it ran
	steps      map[string]float64 // "config: write" -> seconds
	kubelets   int                // kubelet starts this boot
	containerd int                // containerd starts this boot
}

// TestTimeToReady boots the same image again and again, each boot a fresh box,
// for every orderVariant in turn (EKSBOOT_E2E_BOOTS rounds, default 5, one box at a
// time so that they do not share the CPUs), waits for the Node to be Ready and
// prints each variant's median timeline side by side, with the difference between
// the orders. Each boot also checks its order: eksboot's order starts the kubelet
// before cloud-final ends for NodeConfig user data, and after it when a script part
// runs (which must find no kubelet running) or with nodeadm's order.
func TestTimeToReady(t *testing.T) {
	bl := prepare(t)
	rounds, _ := strconv.Atoi(os.Getenv("EKSBOOT_E2E_BOOTS"))
	if rounds <= 0 {
		rounds = 5
	}
	results := make([][]bootTimes, len(orderVariants))
	var raw []string
	t.Cleanup(func() {
		for _, l := range raw {
			t.Log(l)
		}
		t.Log(sideBySide(results, rounds))
	})
	for round := range rounds {
		// Every other round in the other order: a variant does not always follow the
		// same one (the last box's teardown, the machine's load).
		order := make([]int, len(orderVariants))
		for i := range order {
			order[i] = i
			if round%2 == 1 {
				order[i] = len(order) - 1 - i
			}
		}
		for _, vi := range order {
			v := orderVariants[vi]
			t.Run(fmt.Sprintf("%d/%s", round+1, v.name), func(t *testing.T) {
				bt := bootOrder(t, bl, v, fmt.Sprintf("e2e-ttr-%d-%d", round, vi))
				results[vi] = append(results[vi], bt)
				raw = append(raw, fmt.Sprintf("boot %d, %s: %s", round+1, v.name, bt))
			})
		}
	}
}

// bootOrder boots v once in a fresh box and returns its times, after checking the
// order the kubelet started in.
func bootOrder(t *testing.T, bl *build, v orderVariant, machine string) bootTimes {
	inst := imdstest.DefaultInstance()
	inst.UserData = sampleUserData(t, bl, v.pb.sample)
	if v.script {
		if !strings.HasSuffix(inst.UserData, "--//--\n") {
			t.Fatalf("%s: not a MIME document with the boundary // at its end", v.pb.sample)
		}
		inst.UserData = strings.TrimSuffix(inst.UserData, "--//--\n") + scriptPart + "--//--\n"
	}
	b := newBox(t, machine, bl.base)
	provision(t, b, bl, kubeletDir(t, bl, v.pb.k), inst, endpointHost)
	provisionPods(t, b, bl, v.pb)
	// The cluster is up before the node boots, as on EC2: the node's boot (eksboot,
	// cloud-init) waits for the API server, so its start-up, on the same CPUs, is no
	// part of the node's timeline, which starts when the API server is ready.
	b.write("etc/systemd/system/e2e-apiserver-ready.service.d/50-e2e-before-the-node.conf", 0o644,
		"# make e2e: the cluster up before the node boots.\n[Unit]\nBefore=cloud-init-local.service eksboot-config.service\n")
	if v.nodeadm {
		b.write("etc/systemd/system/eksboot-.service.d/50-e2e-order.conf", 0o644,
			"# make e2e: nodeadm's order, the kubelet after cloud-final.\n[Service]\nEnvironment=EKSBOOT_KUBELET_START=after-cloud-final\n")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	start := time.Now()
	state := b.boot(ctx)
	defer func() {
		if t.Failed() {
			t.Logf("journal of the boot: %s", b.saveJournal())
		}
	}()
	if state != "running" {
		failed, _ := b.exec("systemctl", "--failed", "--no-pager", "--no-legend")
		t.Fatalf("systemctl is-system-running: %s, want running; failed units:\n%s", state, failed)
	}
	waitNodeReady(t, ctx, b, inst.LocalHostname)
	bt := readBootTimes(t, b, start)
	checkNoOrderingCycle(t, b, "")
	checkActive(t, b)
	checkOrder(t, b, v, bt, start)
	return bt
}

// checkOrder: the kubelet started once, in the order v asks for, and the journal of
// eksboot-config says which order and why.
func checkOrder(t *testing.T, b *box, v orderVariant, bt bootTimes, start time.Time) {
	t.Helper()
	if bt.kubelets != 1 {
		t.Errorf("the kubelet was started %d times, want once", bt.kubelets)
	}
	// On AL2023 containerd starts once, after the config phase, on its files; on
	// AL2 bootstrap.sh writes its config after the boot started it, and restarts it.
	if want := map[string]int{"al2023": 1, "al2": 2}[v.pb.profile]; bt.containerd != want {
		t.Errorf("containerd was started %d times, want %d", bt.containerd, want)
	}
	kubelet, final := bt.at["kubelet started"], bt.at["cloud-final done"]
	config := b.journal("eksboot-config.service")
	switch {
	case v.pb.profile == "al2": // bootstrap.sh, from the script cloud-final runs
		if kubelet == 0 || kubelet > final {
			t.Errorf("kubelet started at %.2fs, cloud-final done at %.2fs: want it started inside cloud-final, by bootstrap.sh", kubelet, final)
		}
	case v.nodeadm || v.script:
		if kubelet < final {
			t.Errorf("kubelet started at %.2fs, before cloud-final was done (%.2fs): want after", kubelet, final)
		}
		want := "kubelet start after cloud-final: asked for"
		if v.script {
			want = "kubelet start after cloud-final: part 3 (text/x-shellscript) is a script that cloud-final runs"
		}
		if len(lines(config, want)) == 0 {
			t.Errorf("eksboot-config's journal lacks %q:\n%s", want, tail(config, 20))
		}
	default:
		if kubelet >= final {
			t.Errorf("kubelet started at %.2fs, cloud-final done at %.2fs: want it started before", kubelet, final)
		}
		const want = "kubelet start before cloud-final: the user data has only NodeConfig parts (2), which cloud-init does not run"
		if len(lines(config, want)) == 0 {
			t.Errorf("eksboot-config's journal lacks %q:\n%s", want, tail(config, 20))
		}
	}
	if !v.script {
		return
	}
	saw, err := b.readRoot("var/lib/e2e-script-saw")
	if err != nil {
		t.Fatalf("the user data's script did not run: %v", err)
	}
	f := strings.Fields(saw)
	ran, err := strconv.ParseFloat(f[0], 64)
	if err != nil || len(f) < 2 {
		t.Fatalf("the script's record: %q", saw)
	}
	if f[1] != "inactive" {
		t.Errorf("the user data's script saw the kubelet %s, want inactive (not started before the scripts ran)", f[1])
	}
	if at := ran - float64(start.UnixMicro())/1e6 - bt.clusterUp; kubelet < at {
		t.Errorf("the kubelet started at %.2fs, before the user data's script ran (%.2fs)", kubelet, at)
	}
}

// readBootTimes reads the boot's steps from systemd's timestamps in the box and the
// kubelet's journal (its lines say when it registered the Node and when the Node
// became Ready, to the microsecond; the API server's timestamps are whole seconds).
func readBootTimes(t *testing.T, b *box, start time.Time) bootTimes {
	t.Helper()
	bt := bootTimes{at: map[string]float64{}, ran: map[string]float64{}, steps: map[string]float64{}}
	at := func(unit, prop string) float64 {
		args := []string{"systemctl", "show", "--timestamp=us+utc", "--property=" + prop, "--value"}
		if unit != "" {
			args = append(args, unit)
		}
		out, err := b.exec(args...)
		if err != nil {
			return 0
		}
		ts, err := time.Parse("Mon 2006-01-02 15:04:05.000000 MST", strings.TrimSpace(out))
		if err != nil {
			return 0
		}
		return ts.Sub(start).Seconds()
	}
	for step, up := range map[string][2]string{
		"systemd up":                   {"", "UserspaceTimestamp"},
		"API server ready":             {"e2e-apiserver-ready.service", "ActiveEnterTimestamp"},
		"eksboot-config started":       {"eksboot-config.service", "InactiveExitTimestamp"},
		"eksboot-config done":          {"eksboot-config.service", "ActiveEnterTimestamp"},
		"cloud-init-local done":        {"cloud-init-local.service", "ActiveEnterTimestamp"},
		"cloud-init (init stage) done": {"cloud-init.service", "ActiveEnterTimestamp"},
		"containerd started":           {"containerd.service", "InactiveExitTimestamp"},
		"containerd active":            {"containerd.service", "ActiveEnterTimestamp"},
		"cloud-config done":            {"cloud-config.service", "ActiveEnterTimestamp"},
		"cloud-final done":             {"cloud-final.service", "ActiveEnterTimestamp"},
		"eksboot-run done":             {"eksboot-run.service", "ActiveEnterTimestamp"},
		"kubelet started":              {"kubelet.service", "ExecMainStartTimestamp"},
	} {
		bt.at[step] = at(up[0], up[1])
	}
	for _, u := range []string{"eksboot-config.service", "eksboot-run.service"} {
		if from, to := at(u, "InactiveExitTimestamp"), at(u, "ActiveEnterTimestamp"); from > 0 && to > 0 {
			bt.ran[u] = to - from
		}
	}
	journal := func(unit string) []string {
		out, err := b.exec("journalctl", "--boot", "--no-pager", "--output=short-unix", "--unit="+unit)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(out, "\n")
	}
	rel := func(l string) (float64, bool) {
		f := strings.Fields(l)
		if len(f) < 3 {
			return 0, false
		}
		sec, err := strconv.ParseFloat(f[0], 64)
		return sec - float64(start.UnixMicro())/1e6, err == nil
	}
	bt.containerd = len(lines(strings.Join(journal("containerd.service"), "\n"), "Started containerd.service"))
	for _, l := range journal("kubelet.service") {
		at, ok := rel(l)
		switch {
		case !ok:
		case strings.Contains(l, "Started kubelet.service"):
			bt.kubelets++
		case strings.Contains(l, "Successfully registered node") && bt.at["Node registered"] == 0:
			bt.at["Node registered"] = at
		case strings.Contains(l, `event="NodeReady"`) && bt.at["Node Ready"] == 0:
			bt.at["Node Ready"] = at
		}
	}
	// eksboot's steps: `step done        {"step": "write", "took": "8.574ms"}`, of
	// init's phases and of bootstrap.sh's run inside cloud-final.
	for unit, run := range map[string]string{"eksboot-config.service": "config", "eksboot-run.service": "run", "cloud-final.service": "bootstrap.sh"} {
		for _, l := range journal(unit) {
			var step, took string
			if i := strings.Index(l, `"step": "`); i >= 0 && strings.Contains(l, "step done") {
				step, _, _ = strings.Cut(l[i+len(`"step": "`):], `"`)
			}
			if i := strings.Index(l, `"took": "`); i >= 0 {
				took, _, _ = strings.Cut(l[i+len(`"took": "`):], `"`)
			}
			if d, err := time.ParseDuration(took); err == nil && step != "" {
				bt.steps[run+": "+step] += d.Seconds()
			}
		}
	}
	// From the cluster up.
	bt.clusterUp = bt.at["API server ready"]
	for k, v := range bt.at {
		if v != 0 {
			bt.at[k] = v - bt.clusterUp
		}
	}
	return bt
}

func (bt bootTimes) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "API server ready %.2f after the box's start, then: systemd up %.2f; ", bt.clusterUp, bt.at["systemd up"])
	for _, s := range timelineSteps {
		if v, ok := bt.at[s]; ok && v != 0 {
			fmt.Fprintf(&sb, "%s %.2f; ", s, v)
		} else {
			fmt.Fprintf(&sb, "%s -; ", s)
		}
	}
	for _, u := range []string{"eksboot-config.service", "eksboot-run.service"} {
		fmt.Fprintf(&sb, "%s ran %.3fs; ", u, bt.ran[u])
	}
	var steps []string
	for _, k := range slices.Sorted(maps.Keys(bt.steps)) {
		steps = append(steps, fmt.Sprintf("%s %.1fms", k, 1000*bt.steps[k]))
	}
	fmt.Fprintf(&sb, "eksboot's steps: %s; containerd started %d times, the kubelet %d", strings.Join(steps, ", "), bt.containerd, bt.kubelets)
	return sb.String()
}

// median of the values that were measured (non-zero); 0 when none was.
func median(vs []float64) float64 {
	var xs []float64
	for _, v := range vs {
		if v != 0 {
			xs = append(xs, v)
		}
	}
	if len(xs) == 0 {
		return 0
	}
	sort.Float64s(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// sideBySide is the table of every variant's medians, the differences between the
// two orders of the same user data, and eksboot's own share.
func sideBySide(results [][]bootTimes, rounds int) string {
	med := func(vi int, f func(bootTimes) float64) float64 {
		var vs []float64
		for _, bt := range results[vi] {
			vs = append(vs, f(bt))
		}
		return median(vs)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "time to Ready, side by side: medians of %d boots each, in seconds from the moment the box's API server was ready, when the node's boot starts (one box at a time, this run)\n", rounds)
	w := tabwriter.NewWriter(&sb, 0, 0, 2, ' ', tabwriter.AlignRight)
	// Columns: each variant, and after each nodeadm variant the difference with the
	// variant before it (eksboot's order of the same user data).
	head := "step\t"
	for vi, v := range orderVariants {
		head += fmt.Sprintf("[%d]\t", vi+1)
		if v.nodeadm {
			head += fmt.Sprintf("[%d]-[%d]\t", vi, vi+1)
		}
	}
	fmt.Fprintln(w, head)
	section := func(name string) { fmt.Fprintln(w, name+strings.Repeat("\t", strings.Count(head, "\t"))) }
	row := func(name string, f func(bootTimes) float64, scale float64, unit string) {
		line := name + "\t"
		for vi, v := range orderVariants {
			m := med(vi, f)
			if m == 0 {
				line += "-\t"
			} else {
				line += fmt.Sprintf("%.2f%s\t", m*scale, unit)
			}
			if v.nodeadm {
				line += fmt.Sprintf("%+.2f%s\t", (med(vi-1, f)-m)*scale, unit)
			}
		}
		fmt.Fprintln(w, line)
	}
	for _, s := range timelineSteps {
		row(s, func(bt bootTimes) float64 { return bt.at[s] }, 1, "")
	}
	// Within a boot, from a step both orders reach the same way: the load moves a
	// whole boot, not these.
	since := func(to, from string) func(bootTimes) float64 {
		return func(bt bootTimes) float64 {
			if bt.at[to] == 0 || bt.at[from] == 0 {
				return 0
			}
			return bt.at[to] - bt.at[from]
		}
	}
	section("within each boot:")
	row("kubelet started, after containerd active", since("kubelet started", "containerd active"), 1, "")
	row("Node Ready, after containerd active", since("Node Ready", "containerd active"), 1, "")
	row("Node Ready, after cloud-init's init stage", since("Node Ready", "cloud-init (init stage) done"), 1, "")
	row("kubelet started, after cloud-final done", since("kubelet started", "cloud-final done"), 1, "")
	row("kubelet started -> Node Ready", since("Node Ready", "kubelet started"), 1, "")
	section("eksboot:")
	row("box start -> API server ready", func(bt bootTimes) float64 { return bt.clusterUp }, 1, "")
	for _, u := range []string{"eksboot-config.service", "eksboot-run.service"} {
		row(u+" ran", func(bt bootTimes) float64 { return bt.ran[u] }, 1, "")
	}
	var steps []string
	for _, bts := range results {
		for _, bt := range bts {
			for k := range bt.steps {
				if !slices.Contains(steps, k) {
					steps = append(steps, k)
				}
			}
		}
	}
	sort.Strings(steps)
	for _, k := range steps {
		row(k, func(bt bootTimes) float64 { return bt.steps[k] }, 1000, "ms")
	}
	_ = w.Flush()
	for vi, v := range orderVariants {
		fmt.Fprintf(&sb, "[%d] %s: %s, containerd %s, kubelet %s, sample %s%s\n", vi+1, v.name, v.pb.profile,
			map[bool]string{true: "2", false: "1.6"}[v.pb.containerd2], v.pb.k.version, v.pb.sample,
			map[bool]string{true: " with a script part", false: ""}[v.script])
	}
	return sb.String()
}
