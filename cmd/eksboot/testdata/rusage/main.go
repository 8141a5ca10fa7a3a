// Command rusage runs its arguments as a child, with its standard output and error
// discarded, and prints the child's peak RSS, page faults and CPU time, for
// BenchmarkStartup. It exists because a child of the benchmark itself would count,
// in ru_maxrss, the test process's memory it shared until exec; this parent is
// small, and what it shares is at most its own few MiB.
//
// Usage: rusage PROGRAM [ARG...]
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: rusage PROGRAM [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(1)
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	fmt.Printf("peak RSS %.1f MiB, page faults %d minor %d major, CPU %.2f ms\n",
		float64(ru.Maxrss)/1024, ru.Minflt, ru.Majflt,
		float64(ru.Utime.Nano()+ru.Stime.Nano())/1e6)
}
