// Package imdstest is a fake EC2 instance metadata service (IMDSv2) for tests
// and for the in-process demo of eksboot.
//
// A Server is a real HTTP server on 127.0.0.1 that answers the same paths with
// the same bodies as the simulated metadata service the golden bootstrap.sh
// cases were recorded against (shared/golden/README.md, "Metadata paths served
// from imds"): a token from PUT /latest/api/token, every GET must carry it
// (else 401), unknown paths answer 404, folders list their children, and
// per-path overrides replace a body or turn a path into a 404.
//
// Faults are programmed per path (Server.SetFaults): a delay, a hang, a
// closed connection, an error status (401, 404, 429, 500, 503...), an HTML or
// empty body, an expired token, an answer far too large (streamed), a
// redirect, each for a number of requests or for good,
// so "N failures then success" is one call. Every request is logged with the
// fault it met (Server.Requests).
//
// The package does not import testing, so non-test code may use it.
package imdstest

import "github.com/eksboot/eksboot/internal/siminstance"

// Instance is the data of one simulated instance (internal/siminstance, which render
// uses without the server).
type Instance = siminstance.Instance

// DefaultInstance returns the m5.large in us-west-2 of the golden case
// 01-m5large-usw2-vpc192.
func DefaultInstance() Instance { return siminstance.Default() }

// buildTree returns every path the instance serves (no leading "/") and its body.
func buildTree(in Instance) (map[string]string, error) { return siminstance.Paths(in) }
