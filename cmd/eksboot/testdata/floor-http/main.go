// Command floor-http is testdata/floor with net/http linked in (as every program that
// talks to IMDS or an AWS API over HTTP has it): BenchmarkProcess measures it beside
// floor and eksboot version, to show what the standard library's HTTP client costs to
// start on a machine.
package main

import (
	"net/http"
	"os"
)

// client keeps net/http (and its crypto/tls) linked, with its package initialisation.
var client = http.DefaultClient

func main() {
	if client == nil {
		os.Exit(1)
	}
	_, _ = os.Stdout.WriteString("floor-http\n")
}
