package sim

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// hostileScripts are user data that try to exhaust render: each must end in a
// LimitError that names the bound (want) and the line, within memory.
var hostileScripts = []struct{ name, src, want string }{
	{"40 doublings", "x=0123456789abcdef\n" + strings.Repeat("x=$x$x\n", 40) + "/etc/eks/bootstrap.sh c", "line 20)"},
	{"a replacement by the value", zeros(65536, "x") + "y=${x//0/$x}\n/etc/eks/bootstrap.sh c", "expanding to more than 16777216 bytes (part 1 (text/x-shellscript) line 2)"},
	{"doublings in one statement", "x=0123456789abcdef\nx=$x$x " + strings.Repeat("x=$x$x ", 39) + "\n/etc/eks/bootstrap.sh c", "line 2"},
	{"doublings in an and-list", "x=0123456789abcdef\n" + strings.Repeat("x=$x$x && ", 40) + "true\n/etc/eks/bootstrap.sh c", "line 2"},
	{"an eval'd loop", "x=ab\neval 'while ((1)); do x=$x$x; done'\n/etc/eks/bootstrap.sh c", "line 2)"},
	{"a file that sources itself", "echo '. ./self.sh' > self.sh\n. ./self.sh\n/etc/eks/bootstrap.sh c", "nested"},
	{"eval of itself", "e='eval $e'; eval $e\n/etc/eks/bootstrap.sh c", "nested"},
	{"a function calling itself", "f() { f; }; f\n/etc/eks/bootstrap.sh c", "nested"},
	{"seq of all int64", "seq -9223372036854775807 9223372036854775807 >/dev/null\n/etc/eks/bootstrap.sh c", "seq"},
	{"sed of 2000 &", zeros(1<<20, "x") + "echo \"$x\" | sed 's/0/" + strings.Repeat("&", 2000) + "/g' > /dev/null\n/etc/eks/bootstrap.sh c", "sed"},
	{"a pipeline fork bomb", "b(){ b|b; }; b\n/etc/eks/bootstrap.sh c", "line 1"},
	{"a background fork bomb", "b(){ b & b; }; b\n/etc/eks/bootstrap.sh c", "line 1"},
	{"brace expansion", "echo {1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9}{1..9} >/dev/null\n/etc/eks/bootstrap.sh c", "line 1"},
	{"a brace sequence", "x=(a{1..100000000})\n/etc/eks/bootstrap.sh c", "line 1"},
	{"printf width", "printf '%999999999s' x >/dev/null\n/etc/eks/bootstrap.sh c", "printf"},
	{"output into a substitution", zeros(1<<20, "y") + "x=$(while :; do echo \"$y\"; done)\n/etc/eks/bootstrap.sh c", "producing more than 16777216 bytes in all (echo, part 1 (text/x-shellscript) line 2)"},
	{"many variables", zeros(1<<20, "y") + "for i in $(seq 1000); do declare v$i=$y; done\n/etc/eks/bootstrap.sh c", "variables holding more than 4194304 bytes (part 1 (text/x-shellscript) line 2)"},
}

// stoppedBy reports whether a bound's message names want, or is the time bound's:
// on a loaded machine a script may run out of time before it reaches the bound it
// aims at, and either refusal is right (the memory is checked all the same).
func stoppedBy(msg, want string) bool {
	return strings.Contains(msg, want) || strings.Contains(msg, "were stopped: still running after ")
}

// zeros is line 1 of a script: name set to n zeros (n a power of two, at least 16).
func zeros(n int, name string) string {
	k := 0
	for m := 16; m < n; m *= 2 {
		k++
	}
	return fmt.Sprintf("%s=0000000000000000; for i in $(seq %d); do %s=$%s$%s; done\n", name, k, name, name, name)
}

// TestHostileScriptsStopAtBounds evaluates each hostile script in a child process
// (this test binary again) under GOMEMLIMIT and a 4 GiB address-space cap, and
// checks that it ends in a LimitError naming the bound and the line, with a peak
// RSS under 256 MiB (without the race detector): never Go's out of memory, a stack
// overflow or a panic.
func TestHostileScriptsStopAtBounds(t *testing.T) {
	if i := os.Getenv("EKSBOOT_SIM_HOSTILE"); i != "" {
		n, _ := strconv.Atoi(i)
		must(t, syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: 4 << 30, Max: 4 << 30}))
		_, err := Evaluate(context.Background(), script(hostileScripts[n].src), Options{})
		var le *LimitError
		if !errors.As(err, &le) {
			fmt.Printf("RESULT not a LimitError: %v\n", err)
			os.Exit(3)
		}
		fmt.Printf("RESULT %v\n", err)
		os.Exit(0)
	}
	for i, tc := range hostileScripts {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileScriptsStopAtBounds$", "-test.count=1")
			cmd.Env = append(os.Environ(), "EKSBOOT_SIM_HOSTILE="+strconv.Itoa(i), "GOMEMLIMIT=192MiB")
			out, err := cmd.CombinedOutput()
			res := string(out)
			if j := strings.Index(res, "RESULT "); j >= 0 {
				res = res[j+len("RESULT "):]
			}
			if len(res) > 600 {
				res = res[:600] + "…"
			}
			if err != nil {
				t.Fatalf("the evaluation ended in %v:\n%s", err, res)
			}
			if !stoppedBy(res, tc.want) || strings.Count(strings.TrimSpace(res), "\n") > 0 {
				t.Errorf("got %q, want one line naming %q", res, tc.want)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
			if rss > 256<<20 && !raceDetector { // the race detector's memory is not render's
				t.Errorf("peak RSS %d MiB, want under 256 MiB", rss>>20)
			}
			t.Logf("%s (peak RSS %d MiB)", strings.TrimSpace(res), rss>>20)
		})
	}
}
