package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/testtools"
)

// envBenchBinary names the binary BenchmarkProcess runs (make bench sets it to the
// release build, bin/eksboot); without it, the one TestMain built.
const envBenchBinary = "EKSBOOT_BENCH_BINARY"

// BenchmarkProcess runs the built binary as a node would, one process per
// iteration: "bootstrap" is `eksboot bootstrap --no-restart --root TMP` on golden
// case 01 (m5.large) against its fake IMDS and EC2 on 127.0.0.1, into an empty root
// each time; "bootstrap-ami" the same into a root with the image's directories
// (amiDirs); "version" is `eksboot version`; "floor" is a static Go program that only
// prints a line (testdata/floor), the least any Go binary costs here, and
// "floor-http" the same with net/http linked in (testdata/floor-http); "floor-bootstrap"
// (testdata/floor-bootstrap) is the least a bootstrap can do: only the IMDS requests
// it needs (token, identity document, MAC, domain, VPC CIDRs; no EC2 call) and the
// atomic writes of the files eksboot wrote for the same instance, copied from a root
// eksboot configured before the timing. At the end it logs the ratios of the medians
// measured in this one run (bootstrap to floor-bootstrap, version to floor-http).
// Besides ns/op it prints the wall time
// of each run (fork and exec included) as min/median/max, the median CPU time of
// the process (getrusage user+sys, less swayed by a busy machine than the wall
// time), its peak RSS (ru_maxrss), the binary's size and, for the bootstrap runs, the
// IMDS GETs and requests per run. ru_maxrss is an upper
// bound: Linux counts in it the memory the child shared with this test process
// between fork and exec, so small programs report about this process's size (the
// floor run shows how much). Run it with a fixed count,
// e.g. -benchtime=50x (make bench does). Numbers are printed, never asserted.
// amiDirs are directories an EKS node image already has where eksboot writes: the
// homes of the templates bootstrap.sh edited in place (kubelet-config.json, the
// kubeconfig, containerd's), and systemd's. The "bootstrap-ami" run starts from a
// root with only these, as the first boot of a node does; "bootstrap" starts from an
// empty root, so eksboot creates every directory.
var amiDirs = []string{"etc/systemd/system", "etc/kubernetes/kubelet", "var/lib/kubelet", "etc/eks/containerd"}

func BenchmarkProcess(b *testing.B) {
	bin := binary
	if p := os.Getenv(envBenchBinary); p != "" {
		bin = p
	}
	st, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	c, fakes := startFakes(b, "01-m5large-usw2-vpc192")
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir()}
	for k, v := range fakes.Env() {
		env = append(env, k+"="+v)
	}
	medians := map[string]time.Duration{}
	bootstrapArgs := func(root string) []string {
		args := append([]string{"bootstrap"}, c.Args...)
		return append(args, "--root", root, "--no-restart", "--kubelet-version", c.KubeletVersion,
			"--imds-endpoint", fakes.IMDS.URL())
	}
	bootstrap := func(dirs []string) func(b *testing.B) {
		return func(b *testing.B) {
			base := b.TempDir()
			before := len(fakes.IMDS.Requests())
			defer func() { reportIMDS(b, fakes.IMDS.Requests()[before:]) }()
			medians[b.Name()] = measure(b, bin, st.Size(), env, func() []string {
				root, err := os.MkdirTemp(base, "root-")
				if err != nil {
					b.Fatal(err)
				}
				for _, d := range dirs {
					if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				return bootstrapArgs(root)
			})
		}
	}
	b.Run("bootstrap", bootstrap(nil))
	b.Run("bootstrap-ami", bootstrap(amiDirs))
	b.Run("version", func(b *testing.B) {
		medians[b.Name()] = measure(b, bin, st.Size(), env, func() []string { return []string{"version"} })
	})
	// The same measurement of static Go programs that only print a line: what any Go
	// binary costs to start here (runtime, fork and exec), and one with net/http, for
	// scale.
	for _, floor := range []string{"floor", "floor-http"} {
		b.Run(floor, func(b *testing.B) {
			bin, cleanup, err := testtools.BuildEksboot("./testdata/" + floor)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(cleanup)
			fst, err := os.Stat(bin)
			if err != nil {
				b.Fatal(err)
			}
			medians[b.Name()] = measure(b, bin, fst.Size(), env, func() []string { return nil })
		})
	}
	b.Run("floor-bootstrap", func(b *testing.B) {
		floor, cleanup, err := testtools.BuildEksboot("./testdata/floor-bootstrap")
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cleanup)
		fst, err := os.Stat(floor)
		if err != nil {
			b.Fatal(err)
		}
		base := b.TempDir()
		ref := filepath.Join(base, "ref")
		if err := os.Mkdir(ref, 0o755); err != nil {
			b.Fatal(err)
		}
		if out, err := exec.Command(bin, bootstrapArgs(ref)...).CombinedOutput(); err != nil {
			b.Fatalf("the reference root: %v\n%s", err, out)
		}
		before := len(fakes.IMDS.Requests())
		defer func() { reportIMDS(b, fakes.IMDS.Requests()[before:]) }()
		medians[b.Name()] = measure(b, floor, fst.Size(), env, func() []string {
			root, err := os.MkdirTemp(base, "root-")
			if err != nil {
				b.Fatal(err)
			}
			return []string{fakes.IMDS.URL(), ref, root}
		})
	})
	ratio := func(a, z string) string {
		ma, mz := medians["BenchmarkProcess/"+a], medians["BenchmarkProcess/"+z]
		if ma == 0 || mz == 0 {
			return a + "/" + z + " not measured"
		}
		return fmt.Sprintf("%s/%s %.2fx (%.2f ms / %.2f ms)", a, z, float64(ma)/float64(mz),
			float64(ma)/float64(time.Millisecond), float64(mz)/float64(time.Millisecond))
	}
	// Printed, not logged: the parent of sub-benchmarks shows its log only when it fails.
	fmt.Printf("BenchmarkProcess: median ratios in this run: %s; %s; %s\n", ratio("bootstrap", "floor-bootstrap"),
		ratio("bootstrap-ami", "floor-bootstrap"), ratio("version", "floor-http"))
}

// reportIMDS reports the IMDS requests of the b.N runs, per run: the GETs, and all
// of them (the token PUT included).
func reportIMDS(b *testing.B, reqs []imdstest.Request) {
	gets := 0
	for _, r := range reqs {
		if r.Method == "GET" {
			gets++
		}
	}
	b.ReportMetric(float64(gets)/float64(b.N), "IMDS-GETs/op")
	b.ReportMetric(float64(len(reqs))/float64(b.N), "IMDS-requests/op")
}

// measure runs bin b.N times with the arguments args gives (made outside the
// timing), reports the wall times and peak RSS of the runs and returns the median
// wall time (0 for the single first run).
func measure(b *testing.B, bin string, size int64, env []string, args func() []string) time.Duration {
	var walls, cpus []time.Duration
	var rss []int64 // KiB
	for b.Loop() {
		b.StopTimer()
		cmd := exec.Command(bin, args()...)
		cmd.Env = env // stdout and stderr: /dev/null
		b.StartTimer()
		t0 := time.Now()
		err := cmd.Run()
		walls = append(walls, time.Since(t0))
		if err != nil {
			b.Fatalf("%s %v: %v", bin, cmd.Args[1:], err)
		}
		ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
		rss = append(rss, ru.Maxrss)
		cpus = append(cpus, time.Duration(ru.Utime.Nano()+ru.Stime.Nano()))
	}
	if len(walls) < 2 { // the SDK's first, single run
		return 0
	}
	slices.Sort(walls)
	slices.Sort(cpus)
	slices.Sort(rss)
	med := walls[len(walls)/2]
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	mb := func(kib int64) float64 { return float64(kib) / 1024 }
	b.ReportMetric(ms(med), "ms-median")
	b.ReportMetric(mb(rss[len(rss)-1]), "MiB-peak-rss")
	b.Logf("%s: %d runs: wall min %.2f ms, median %.2f ms, max %.2f ms; CPU (user+sys) median %.2f ms; "+
		"peak RSS min %.1f MiB, median %.1f MiB, max %.1f MiB; binary %.1f MiB (%s)",
		b.Name(), len(walls), ms(walls[0]), ms(med), ms(walls[len(walls)-1]), ms(cpus[len(cpus)/2]),
		mb(rss[0]), mb(rss[len(rss)/2]), mb(rss[len(rss)-1]), float64(size)/(1<<20), bin)
	return med
}
