package doctor

import (
	"context"
	"io/fs"
	"net"
	"time"
)

// Env is the outside world of a checklist. Each field is a small interface, so that
// tests replace any of them; cli/doctor.go builds the real one.
type Env struct {
	// Files reads the node's files under --root (*rootfs.Root).
	Files Files
	// IMDS is the instance metadata service.
	IMDS IMDS
	// Resolver resolves the API server's host name.
	Resolver Resolver
	// Dialer opens TCP connections (the API server).
	Dialer Dialer
	// Now is the clock.
	Now func() time.Time
	// Units reads systemd unit state.
	Units Units
	// Journal reads a unit's journal.
	Journal Journal
	// Exec runs the kubeconfig's exec credential plugin.
	Exec Runner
	// Statfs reports a file system's free space and inodes.
	Statfs Statfs
	// CRI asks the container runtime its version over the CRI socket.
	CRI CRI
}

func (e *Env) now() time.Time {
	if e.Now == nil {
		return time.Now()
	}
	return e.Now()
}

// Files reads node files by node path ("/etc/kubernetes/pki/ca.crt"), under the root.
// *rootfs.Root is one.
type Files interface {
	ReadFileLimit(p string, max int64) ([]byte, error)
	Stat(p string) (fs.FileInfo, error)
	ReadDir(p string) ([]string, error)
	// Resolve maps a node path to the host path under the root.
	Resolve(p string) (string, error)
	// Dir is the root directory ("/" on the node).
	Dir() string
}

// IMDS is the instance metadata service, spoken to over IMDSv2.
type IMDS interface {
	// Endpoint is the service's base URL.
	Endpoint() string
	// Token asks for a session token (PUT /latest/api/token).
	Token(ctx context.Context) (TokenAnswer, error)
	// Get reads path ("latest/meta-data/instance-id") with the token and returns the
	// body and the HTTP status.
	Get(ctx context.Context, token, path string) (string, int, error)
}

// TokenAnswer is IMDS's answer to a token request.
type TokenAnswer struct {
	// Status is the HTTP status (200: a token).
	Status int
	// Token is the session token (a secret).
	Token string
	// HopLimit is the IP TTL the answer's packets arrived with: the instance's
	// HttpPutResponseHopLimit, which IMDS puts in the TTL of its token answers. 0
	// when it could not be measured; HopNote then says why.
	HopLimit int
	HopNote  string
}

// Resolver resolves host names (net.Resolver is one).
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// Dialer opens connections (net.Dialer is one).
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Units reads the state of systemd units.
type Units interface {
	Unit(ctx context.Context, name string) (UnitState, error)
}

// UnitState is what systemd says of a service unit.
type UnitState struct {
	LoadState   string // "loaded", "not-found"
	ActiveState string // "active", "failed", "activating", "inactive"
	SubState    string // "running", "auto-restart", "dead"
	Result      string // "success", "exit-code", "signal", "timeout"
	// ExecMainStatus is the main process's exit status (or signal).
	ExecMainStatus int
	NRestarts      int
	// ActiveEnter is when the unit last became active (zero: never).
	ActiveEnter time.Time
}

// Journal reads journal entries.
type Journal interface {
	// Entries returns up to n of the unit's latest entries, oldest first.
	Entries(ctx context.Context, unit string, n int) ([]JournalEntry, error)
}

// JournalEntry is one journal entry, from journald's JSON export.
type JournalEntry struct {
	Time     time.Time
	Priority int // 0 emerg ... 7 debug; -1 unknown
	Message  string
	// Identifier is SYSLOG_IDENTIFIER ("kubelet", "systemd").
	Identifier string
}

// Runner runs a program.
type Runner interface {
	// Run runs path with args and env (the whole environment), stdout and stderr
	// read through a limit.
	Run(ctx context.Context, path string, args, env []string) (stdout, stderr []byte, err error)
}

// Statfs reports a file system's space.
type Statfs interface {
	// Statfs reports the file system of the host path p.
	Statfs(p string) (FSStats, error)
}

// FSStats is a file system's size and what is free for unprivileged users, in bytes
// and inodes.
type FSStats struct {
	Bytes, BytesFree   uint64
	Inodes, InodesFree uint64
}

// CRI is the container runtime's CRI endpoint.
type CRI interface {
	// Version calls RuntimeService.Version over the unix socket at the host path p.
	Version(ctx context.Context, p string) (CRIVersion, error)
}

// CRIVersion is the CRI Version answer.
type CRIVersion struct {
	RuntimeName, RuntimeVersion, RuntimeAPIVersion string
}
