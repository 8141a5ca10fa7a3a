//go:build !node

package main

import (
	"github.com/eksboot/eksboot/cli"
	"github.com/eksboot/eksboot/cli/rendercmd"
)

// linkRender links render's implementation into this build: `go build ./cmd/eksboot`
// (or go install) gives one program with every command. The node image's build,
// make build's bin/eksboot, has the node tag and leaves render to eksboot-render
// (render_node.go), so that no boot initialises render's simulator.
func linkRender() { cli.RenderInProcess(rendercmd.Run) }
