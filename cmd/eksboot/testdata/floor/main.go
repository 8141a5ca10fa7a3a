// Command floor prints one line and exits: the least a static Go binary costs to
// start on a machine. BenchmarkProcess measures it beside eksboot version, so that
// the numbers of a machine come with their floor.
package main

import "os"

func main() { _, _ = os.Stdout.WriteString("floor\n") }
