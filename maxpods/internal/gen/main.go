// Command gen turns eksboot's instance data (assets/eni-limits.csv, the per-type
// facts, and assets/eni-max-pods.txt, the max-pods numbers) into
// maxpods/zz_generated_table.go: a sorted entry array and a two-level perfect hash over
// it (a seed per bucket picks collision-free slots), all statically initialised.
// `go generate ./maxpods` runs it; with -check it only reports whether the file is
// up to date.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/eksboot/eksboot/internal/genfile"
)

func main() {
	csvPath := flag.String("csv", "", "eni-limits.csv: the facts of each instance type")
	txtPath := flag.String("txt", "", "eni-max-pods.txt: the max-pods number of each instance type")
	out := flag.String("out", "", "the Go file to write")
	check := flag.Bool("check", false, "write nothing; fail when -out differs from what would be generated")
	flag.Parse()
	if *csvPath == "" || *txtPath == "" || *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen -csv eni-limits.csv -txt eni-max-pods.txt -out zz_generated_table.go [-check]")
		os.Exit(2)
	}
	if err := run(*csvPath, *txtPath, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run generates the table from the two files and writes (or checks) out.
func run(csvPath, txtPath, out string, check bool) error {
	csvData, err := os.ReadFile(csvPath)
	if err != nil {
		return err
	}
	txtData, err := os.ReadFile(txtPath)
	if err != nil {
		return err
	}
	src, err := generate(csvData, txtData)
	if err != nil {
		return err
	}
	return genfile.WriteOrCheck(out, src, check, "its inputs changed", "make generate")
}
