package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/testtools"
)

// BenchmarkStartup accounts for the whole process of `eksboot bootstrap
// --no-restart` (golden case 01 against its fakes on 127.0.0.1, as BenchmarkProcess
// runs it) and of `eksboot version`, phase by phase, from b.N interleaved rounds:
// each round runs floor, floor-http, version, then bootstrap and floor-bootstrap
// with their roots on tmpfs (/dev/shm) and, when TMPDIR is not tmpfs, on disk
// (TMPDIR), so that a change of the machine's load falls on every program alike.
// version runs once more with GODEBUG=inittrace=1, which gives every package's
// init (that run's wall time is not used: the trace's printing costs); bootstrap's
// log gives each step's time ("step done ... took"). The table prints medians over the
// rounds of each phase, and the ratios as medians of the per-round ratios:
//
//   - exec, runtime start and exit of a Go program: floor's wall time;
//   - net/http's share: floor-http − floor;
//   - the rest of eksboot's start (a bigger binary's page faults and runtime set-up):
//     version − floor-http − eksboot's package init;
//   - package init: the sum of inittrace's clock times, and the dearest packages;
//   - flags, settings, logger, the image and version reads, the run lock's file and
//     exit: bootstrap − version − the steps (what bootstrap does outside the steps
//     that version does not);
//   - the steps, as eksboot logs them.
//
// Page faults (ru_minflt) and the peak RSS are measured by the rusage helper
// (testdata/rusage), a small parent: a child of this test process would count the
// test's own memory in ru_maxrss. When valgrind is on PATH, each program's
// instruction count (callgrind, one run; GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off, as callgrind
// cannot follow Go's preemption signals) is printed too: unlike times, it does not
// move with the machine's load. Numbers are printed, never asserted.
func BenchmarkStartup(b *testing.B) {
	bin := binary
	if p := os.Getenv(envBenchBinary); p != "" {
		bin = p
	}
	c, fakes := startFakes(b, "01-m5large-usw2-vpc192")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	for k, v := range fakes.Env() {
		env = append(env, k+"="+v)
	}
	build := func(name string) string {
		p, cleanup, err := testtools.BuildEksboot("./testdata/" + name)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cleanup)
		return p
	}
	floor, floorHTTP, floorBoot, rusage := build("floor"), build("floor-http"), build("floor-bootstrap"), build("rusage")
	bootArgs := func(root string) []string {
		args := append([]string{"bootstrap"}, c.Args...)
		return append(args, "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion,
			"--imds-endpoint", fakes.IMDS.URL())
	}
	type place struct{ name, dir, ref string }
	places := []place{{name: "tmpfs", dir: "/dev/shm"}}
	if d := os.TempDir(); !isTmpfs(d) {
		places = append(places, place{name: "disk", dir: d})
	}
	if !isTmpfs("/dev/shm") {
		places = places[1:]
	}
	for i := range places {
		dir, err := os.MkdirTemp(places[i].dir, "eksboot-startup-")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = os.RemoveAll(dir) })
		places[i].dir = dir
		places[i].ref = mkdir(b, dir)
		if out, err := exec.Command(bin, bootArgs(places[i].ref)...).CombinedOutput(); err != nil {
			b.Fatalf("the reference root: %v\n%s", err, out)
		}
	}

	samples := map[string][]float64{} // ms, per phase and place
	add := func(k string, v float64) { samples[k] = append(samples[k], v) }
	initMin := map[string]float64{} // the least init time of each package over the runs
	run := func(extraEnv []string, name string, args ...string) (wall float64, stderr string) {
		cmd := exec.Command(name, args...)
		cmd.Env = append(slices.Clone(env), extraEnv...)
		var e bytes.Buffer
		cmd.Stderr = &e
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v\n%s", name, args, err, e.String())
		}
		return ms(time.Since(t0)), e.String()
	}
	inittrace := []string{"GODEBUG=inittrace=1"}
	n := 0
	for b.Loop() {
		n++
		fl, _ := run(nil, floor)
		fh, _ := run(nil, floorHTTP)
		ver, _ := run(nil, bin, "version")
		_, trace := run(inittrace, bin, "version") // inittrace's own printing is not in ver
		verInit := initSum(trace, initMin)
		add("floor", fl)
		add("floor-http", fh)
		add("net/http", fh-fl)
		add("version", ver)
		add("version-init", verInit)
		add("version-start", ver-fh-verInit)
		add("version−floor-http", ver-fh)
		for _, p := range places {
			root, err := os.MkdirTemp(p.dir, "root-")
			if err != nil {
				b.Fatal(err)
			}
			boot, log := run(nil, bin, bootArgs(root)...)
			root2, err := os.MkdirTemp(p.dir, "root-")
			if err != nil {
				b.Fatal(err)
			}
			fb, _ := run(nil, floorBoot, fakes.IMDS.URL(), p.ref, root2)
			steps := 0.0
			for _, s := range stepTimes(log) {
				add(p.name+"/step "+s.name, s.ms)
				steps += s.ms
			}
			add(p.name+"/bootstrap", boot)
			add(p.name+"/outside", boot-ver-steps)
			add(p.name+"/floor-bootstrap", fb)
			add(p.name+"/ratio", boot/fb)
			_ = os.RemoveAll(root)
			_ = os.RemoveAll(root2)
		}
	}
	if n < 2 {
		return // the benchmark's first, single round
	}
	med := func(k string) float64 {
		v := slices.Clone(samples[k])
		if len(v) == 0 {
			return 0
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	load, _ := os.ReadFile("/proc/loadavg")
	var w strings.Builder
	fmt.Fprintf(&w, "\nwhole process, %d interleaved rounds (load average %s), medians in ms:\n", n, strings.Join(strings.Fields(string(load))[:3], " "))
	row := func(label, format string, args ...any) {
		fmt.Fprintf(&w, "  %-58s "+format+"\n", append([]any{label}, args...)...)
	}
	row("floor: exec, runtime start, exit of a Go program", "%6.2f", med("floor"))
	row("+ net/http linked (floor-http − floor)", "%6.2f", med("net/http"))
	row("+ eksboot's bigger binary (version − floor-http − init)", "%6.2f", med("version-start"))
	row("+ eksboot's package init (inittrace, sum)", "%6.2f", med("version-init"))
	row("= eksboot version", "%6.2f", med("version"))
	for _, p := range places {
		fmt.Fprintf(&w, "  bootstrap --no-restart, root on %s (%s):\n", p.name, filepath.Dir(p.dir))
		row("  start and exit, as version", "%6.2f", med("version"))
		row("+ flags, settings, logger, reads: bootstrap − version − steps", "%6.2f", med(p.name+"/outside"))
		for _, s := range stepNames(samples, p.name+"/step ") {
			row("+ step "+s, "%6.2f", med(p.name+"/step "+s))
		}
		row("  = bootstrap", "%6.2f", med(p.name+"/bootstrap"))
		row("  floor-bootstrap (the least a bootstrap does)", "%6.2f", med(p.name+"/floor-bootstrap"))
	}
	fmt.Fprintf(&w, "  ratios (medians of the per-round values):")
	for _, p := range places {
		fmt.Fprintf(&w, " bootstrap/floor-bootstrap %s %.2fx;", p.name, med(p.name+"/ratio"))
	}
	fmt.Fprintf(&w, " version − floor-http %+.2f ms\n", med("version−floor-http"))
	type pkg struct {
		name string
		ms   float64
	}
	var pkgs []pkg
	for k, v := range initMin {
		pkgs = append(pkgs, pkg{k, v})
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].ms > pkgs[j].ms })
	fmt.Fprintf(&w, "  dearest package inits of version (least of %d runs, ms; %d packages):", n, len(pkgs))
	for i, p := range pkgs {
		if i == 10 {
			break
		}
		fmt.Fprintf(&w, " %s %.3f,", p.name, p.ms)
	}
	w.WriteString("\n")
	// Page faults and peak RSS, under the small rusage parent.
	tmpfsRoot := places[0]
	for _, x := range []struct {
		name string
		args []string
	}{
		{"floor", []string{floor}},
		{"floor-http", []string{floorHTTP}},
		{"version", []string{bin, "version"}},
		{"bootstrap", append([]string{bin}, bootArgs(mkdir(b, tmpfsRoot.dir))...)},
		{"floor-bootstrap", []string{floorBoot, fakes.IMDS.URL(), tmpfsRoot.ref, mkdir(b, tmpfsRoot.dir)}},
	} {
		out, err := exec.Command(rusage, x.args...).Output()
		if err != nil {
			b.Fatalf("rusage %v: %v", x.args, err)
		}
		fmt.Fprintf(&w, "  %-16s %s", x.name, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	fmt.Fprintf(&w, "  binary %s: %d bytes (%.2f MiB)\n", bin, st.Size(), float64(st.Size())/(1<<20))
	if _, err := exec.LookPath("valgrind"); err == nil {
		fmt.Fprintf(&w, "  instructions (callgrind, one run each):")
		for _, x := range []struct {
			name string
			args []string
		}{
			{"floor-http", []string{floorHTTP}},
			{"version", []string{bin, "version"}},
			{"bootstrap", append([]string{bin}, bootArgs(mkdir(b, tmpfsRoot.dir))...)},
			{"floor-bootstrap", []string{floorBoot, fakes.IMDS.URL(), tmpfsRoot.ref, mkdir(b, tmpfsRoot.dir)}},
		} {
			fmt.Fprintf(&w, " %s %s,", x.name, instructions(b, env, x.args))
		}
		w.WriteString("\n")
	}
	// Printed, not logged: a benchmark's log shows only with -v or on failure.
	fmt.Print(w.String())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// isTmpfs reports whether dir is on a tmpfs.
func isTmpfs(dir string) bool {
	var s syscall.Statfs_t
	return syscall.Statfs(dir, &s) == nil && s.Type == 0x01021994 // TMPFS_MAGIC
}

func mkdir(b *testing.B, dir string) string {
	d, err := os.MkdirTemp(dir, "root-")
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// initLine is a line of GODEBUG=inittrace=1: "init net/http @1.2 ms, 0.034 ms clock, ...".
var initLine = regexp.MustCompile(`(?m)^init (\S+) @[0-9.]+ ms, ([0-9.]+) ms clock`)

// initSum returns the sum of the package inits in trace and lowers least's entries.
func initSum(trace string, least map[string]float64) float64 {
	sum := 0.0
	for _, m := range initLine.FindAllStringSubmatch(trace, -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		sum += v
		if least != nil {
			if old, ok := least[m[1]]; !ok || v < old {
				least[m[1]] = v
			}
		}
	}
	return sum
}

// stepLine is eksboot's console log line of a finished step.
var stepLine = regexp.MustCompile(`step done\s+\{"step": "([^"]+)", "took": "([^"]+)"`)

type stepTime struct {
	name string
	ms   float64
}

// stepTimes returns the steps eksboot logged, in order.
func stepTimes(log string) []stepTime {
	var out []stepTime
	for _, m := range stepLine.FindAllStringSubmatch(log, -1) {
		if d, err := time.ParseDuration(m[2]); err == nil {
			out = append(out, stepTime{m[1], ms(d)})
		}
	}
	return out
}

// stepNames returns the step names of samples under prefix, in the order of the
// pipeline (lock, instance facts, compute, diff, write; others after them).
func stepNames(samples map[string][]float64, prefix string) []string {
	order := []string{"lock", "instance facts", "compute", "diff", "write"}
	var names []string
	for k := range samples {
		if s, ok := strings.CutPrefix(k, prefix); ok {
			names = append(names, s)
		}
	}
	rank := func(s string) int {
		if i := slices.Index(order, s); i >= 0 {
			return i
		}
		return len(order)
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
	return names
}

// instructions runs args once under callgrind and returns the instruction count
// ("I refs") as it prints it. valgrind cannot run RDTSCP, which Go's runtime
// executes when one of its locks is contended (runtime.cputicks): the runs have
// it off (GODEBUG cpu.rdtscp=off), and a run that fails all the same is made
// again, up to five times.
func instructions(b *testing.B, env []string, args []string) string {
	var why string
	for range 5 {
		cmd := exec.Command("valgrind", append([]string{"--tool=callgrind", "--callgrind-out-file=/dev/null"}, args...)...)
		cmd.Env = append(slices.Clone(env), "GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			why = err.Error()
			continue
		}
		if m := regexp.MustCompile(`I\s+refs:\s+([0-9,]+)`).FindSubmatch(out); m != nil {
			return string(m[1])
		}
		return "(no count)"
	}
	return "(" + why + ", five times)"
}
