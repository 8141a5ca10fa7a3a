// Command pause is the box's sandbox (pause) image and test pod's program for make e2e
// (docs/development.md, "A node in a box"): a static binary that waits for SIGTERM or
// SIGINT and exits 0, as Kubernetes' pause does. The test packs it into an OCI image
// archive that the box's containerd imports, so no pod ever pulls an image.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGTERM, syscall.SIGINT)
	<-c
}
