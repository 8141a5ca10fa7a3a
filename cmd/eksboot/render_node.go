//go:build node

package main

// linkRender links nothing in the node image's build (-tags node, make build):
// `eksboot render` execs eksboot-render, installed beside it, and none of render's
// simulator (render/sim, gojq, mvdan.cc/sh) is initialised at boot
// (TestNodeBinaryLinksNoRender).
func linkRender() {}
