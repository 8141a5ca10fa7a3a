// Package iptables is the part of sigs.k8s.io/iptables-wrappers' package that the
// kubelet of Kubernetes v1.38.0-beta.0 calls (pkg/kubelet/kubelet_network_linux.go),
// written for eksboot's test kubelet: the module proxy refuses the real module. It finds
// no iptables: NewBestEffort returns no clients, and the kubelet logs "No iptables support
// on this system" and goes on, as it does on a host with nftables only.
package iptables

import (
	"context"
	"time"
)

// Chain is an iptables chain.
type Chain string

// Table is an iptables table.
type Table string

// RulePosition is where a rule goes in its chain: "-I" (Prepend) or "-A" (Append).
type RulePosition string

// Protocol is the IP family of a client.
type Protocol string

// Mode is how the iptables binaries are chosen.
type Mode int

// The names the kubelet uses.
const (
	TableFilter Table = "filter"
	TableNAT    Table = "nat"
	TableMangle Table = "mangle"

	ChainInput  Chain = "INPUT"
	ChainOutput Chain = "OUTPUT"

	Prepend RulePosition = "-I"
	Append  RulePosition = "-A"

	ProtocolIPv4 Protocol = "IPv4"
	ProtocolIPv6 Protocol = "IPv6"

	// UseInstalledMode uses whichever iptables mode the host's binaries are in.
	UseInstalledMode Mode = iota
)

// Interface is an iptables client of one IP family.
type Interface interface {
	// EnsureChain makes chain in table; true when it existed.
	EnsureChain(ctx context.Context, table Table, chain Chain) (bool, error)
	// EnsureRule adds the rule args to chain unless it is there; true when it was.
	EnsureRule(ctx context.Context, position RulePosition, table Table, chain Chain, args ...string) (bool, error)
	// IsIPv6 reports whether the client is of IPv6.
	IsIPv6() bool
	// Protocol is the client's IP family.
	Protocol() Protocol
	// Monitor calls reload when canary disappears from any of tables, checking every interval.
	Monitor(ctx context.Context, canary Chain, tables []Table, reload func(), interval time.Duration)
}

// NewBestEffort returns a client for each IP family whose iptables works on the host:
// none, in this stand-in.
func NewBestEffort(ctx context.Context, mode Mode) map[Protocol]Interface {
	return nil
}
