// Command eksboot-render is `eksboot render`, which execs it: what a node launched
// with some user data would get, offline. A program of its own so that the node's
// binary, eksboot, does not link the user data's simulator (package cli/rendercmd
// says why); see the README.
package main

import (
	"os"

	"github.com/eksboot/eksboot/cli/rendercmd"
)

func main() {
	os.Exit(rendercmd.Main(os.Args, os.Stdout, os.Stderr))
}
