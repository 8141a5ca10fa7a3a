package bootstrap

import (
	"context"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/systemd"
)

// Env is the outside world a bootstrap run talks to. Run uses only what is here, so
// tests replace any part of it; DefaultEnv gives the real one.
type Env struct {
	// Root is where the node's files are written (its Plan, Apply and MkdirAll).
	Root *rootfs.Root
	// Files reads the node's files: Root, or for `eksboot render` an image that
	// exists only in memory.
	Files  NodeFiles
	Log    *zap.Logger
	Stdout io.Writer // --dry-run output
	Getenv func(string) string
	// IMDS reads the instance facts.
	IMDS func(ctx context.Context, o imds.Options) (*imds.Facts, error)
	// EC2 returns the EC2 client for region, its credentials from IMDS at imdsEndpoint
	// (IMDSv2 only unless imdsV1Fallback: --imds-v1-fallback).
	EC2 func(ctx context.Context, region, imdsEndpoint string, imdsV1Fallback bool) (ec2api.API, error)
	// EKS returns the EKS client for region, its credentials as EC2's.
	EKS func(ctx context.Context, region, imdsEndpoint string, imdsV1Fallback bool) (eksapi.API, error)
	// Discovery shapes the waits of cluster discovery (zero: eksapi's defaults); the
	// retry budget and the deadline come from the flags.
	Discovery eksapi.Policy
	// Systemd connects to the service manager.
	Systemd func(ctx context.Context) (systemd.Manager, error)
	// CPUs is the number of CPUs this process may run on.
	CPUs func() int
	// MemoryBytes is the node's memory (FastImagePull's threshold, for an instance
	// type the table lacks).
	MemoryBytes func() (int64, error)
	// LookupHost resolves a host name.
	LookupHost func(ctx context.Context, host string) ([]string, error)
	// KubeletVersion runs `kubelet --version`.
	KubeletVersion func(ctx context.Context) (string, error)
	// ContainerdVersion runs `containerd --version` (asked only on the node itself,
	// --root /, when the image has no /etc/eks/containerd-version.txt).
	ContainerdVersion func(ctx context.Context) (string, error)
	// Command runs a helper program of the node image (setup-local-disks, the GPU hook).
	Command func(ctx context.Context, name string, args ...string) error
	// Geteuid is the effective user ID.
	Geteuid func() int
	// KubeletSettle is how long a started kubelet must stay active for the run to
	// succeed (DefaultKubeletSettle; EKSBOOT_KUBELET_SETTLE overrides it).
	KubeletSettle time.Duration
	// DNSNameAttempts and DNSNameInterval bound the retries while EC2 returns an empty
	// PrivateDnsName (bootstrap.sh's PRIVATE_DNS_NAME_MAX_ATTEMPTS and _ATTEMPT_INTERVAL).
	DNSNameAttempts int
	DNSNameInterval time.Duration
	// HostLookupAttempts and HostLookupInterval bound the retries while a local
	// cluster's API server name does not resolve (outpost.go; zero attempts: the
	// default, 3).
	HostLookupAttempts int
	HostLookupInterval time.Duration
	// OnStep, when set, is told as each step of the run starts and ends: how the
	// CLI knows where a stop signal found the run. It must not block.
	OnStep func(StepEvent)
}

// StepEvent is a step of the run starting (Ended false) or ending, with its error
// when it failed. Steps: "lock", "instance facts", "compute", "diff", "write",
// "restart".
type StepEvent struct {
	Step  string
	Ended bool
	Err   error
}

// NodeFiles reads a node's files by node path. *rootfs.Root is one. A missing file
// is an error satisfying errors.Is(err, fs.ErrNotExist).
type NodeFiles interface {
	ReadFile(p string) ([]byte, error)
	Stat(p string) (fs.FileInfo, error)
	ReadDir(p string) ([]string, error)
}

// OnNode reports whether the run configures the machine it runs on (--root /): only
// then are the node's own programs asked or run (containerd --version, the local
// disks and GPU helpers).
func (e *Env) OnNode() bool { return e.Root != nil && e.Root.Dir() == "/" }

// DefaultEnv returns the real environment for root, logging to log.
func DefaultEnv(root *rootfs.Root, log *zap.Logger, stdout, stderr io.Writer) *Env {
	// The EC2 and EKS clients of a run share one AWS config, so one credentials cache:
	// the instance profile's credentials are read from IMDS once, not once per client
	// (the two may ask at the same time: the EC2 call starts during discovery).
	var mu sync.Mutex
	type configKey struct {
		region, imdsEndpoint string
		v1                   bool
	}
	configs := map[configKey]aws.Config{}
	awsConfig := func(region, imdsEndpoint string, v1 bool) (aws.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		key := configKey{region, imdsEndpoint, v1}
		if cfg, ok := configs[key]; ok {
			return cfg, nil
		}
		cfg, err := ec2api.LoadConfigFor(region, imdsEndpoint, v1)
		if err == nil {
			configs[key] = cfg
		}
		return cfg, err
	}
	return &Env{
		Root:   root,
		Files:  root,
		Log:    log,
		Stdout: stdout,
		Getenv: os.Getenv,
		IMDS:   imds.Fetch,
		EC2: func(ctx context.Context, region, imdsEndpoint string, v1 bool) (ec2api.API, error) {
			cfg, err := awsConfig(region, imdsEndpoint, v1)
			if err != nil {
				return nil, err
			}
			return ec2api.New(cfg), nil
		},
		EKS: func(ctx context.Context, region, imdsEndpoint string, v1 bool) (eksapi.API, error) {
			cfg, err := awsConfig(region, imdsEndpoint, v1) // eksapi takes its credentials, HTTP client and endpoints, not its retryer
			if err != nil {
				return nil, err
			}
			c, err := eksapi.New(cfg)
			if err != nil {
				return nil, err
			}
			return c, nil
		},
		Systemd:     func(ctx context.Context) (systemd.Manager, error) { return systemd.Connect(ctx) },
		CPUs:        runtime.NumCPU,
		MemoryBytes: memoryBytes,
		LookupHost: func(ctx context.Context, host string) ([]string, error) {
			return net.DefaultResolver.LookupHost(ctx, host)
		},
		KubeletVersion: func(ctx context.Context) (string, error) {
			out, err := helper(ctx, "kubelet", "--version").Output()
			return string(out), err
		},
		ContainerdVersion: func(ctx context.Context) (string, error) {
			out, err := helper(ctx, "containerd", "--version").Output()
			return string(out), err
		},
		Command: func(ctx context.Context, name string, args ...string) error {
			cmd := helper(ctx, name, args...)
			cmd.Stdout, cmd.Stderr = stderr, stderr
			return cmd.Run()
		},
		Geteuid:         os.Geteuid,
		KubeletSettle:   envDuration(os.Getenv("EKSBOOT_KUBELET_SETTLE"), DefaultKubeletSettle),
		DNSNameAttempts: envInt(os.Getenv("PRIVATE_DNS_NAME_MAX_ATTEMPTS"), 20) + 1,
		DNSNameInterval: time.Duration(envInt(os.Getenv("PRIVATE_DNS_NAME_ATTEMPT_INTERVAL"), 6)) * time.Second,

		HostLookupAttempts: defaultHostLookupAttempts,
		HostLookupInterval: defaultHostLookupInterval,
	}
}

// helperWaitDelay bounds the wait for a helper's output once its context is done: a
// killed helper whose child keeps the pipe open must not hold a stopped run.
const helperWaitDelay = 500 * time.Millisecond

// helper is exec.CommandContext for the node image's programs, with helperWaitDelay.
func helper(ctx context.Context, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = helperWaitDelay
	return cmd
}

// DefaultKubeletSettle is how long a started kubelet must stay active: a kubelet that
// cannot start (an unknown flag) exits within a second.
const DefaultKubeletSettle = 3 * time.Second

// envDuration parses a non-negative duration, or gives def.
func envDuration(s string, def time.Duration) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return def
	}
	return d
}

// envInt parses a non-negative whole number, or gives def.
func envInt(s string, def int) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return def
	}
	return n
}
