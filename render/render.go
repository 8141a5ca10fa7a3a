// Package render is `eksboot render`'s orchestration: what a node launched with some
// user data would get, computed offline. The user data is parsed (userdata), its
// NodeConfigs merged into a Config (bootstrap.RequestFromNodeConfigs), or its scripts
// evaluated on a simulated instance (render/sim) until they call bootstrap.sh, whose
// command line goes through cli/flags.Parse and bootstrap.ValidateWith; then bootstrap.ComputeNode computes the
// node in memory, against an Env with nothing outside (offlineEnv): IMDS answered from
// internal/siminstance, the image's files from internal/imagefixture, EKS by
// placeholders or, with --discover, by the caller's own credentials (CallerEKS).
// Nothing is written and nothing runs on the host; the CLI parses render's flags and
// prints the Result.
//
// Nothing on the boot path (bootstrap, init, the bootstrap.sh shim) links this package
// or render/sim: only eksboot-render does (cmd/eksboot-render, cli/rendercmd), the
// program that `eksboot render` execs. Go runs the package initialisation of every
// package a binary links at every start, and that of their libraries,
// github.com/itchyny/gojq (1-1.3 ms here, 214 KiB in 2,278 allocations) and
// mvdan.cc/sh/v3 (0.2-0.35 ms, 27 KiB), would otherwise run at every boot
// (cmd/eksboot's TestNodeBinaryLinksNoRender).
package render

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli/flags"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/render/sim"
	"github.com/eksboot/eksboot/systemd"
	"github.com/eksboot/eksboot/userdata"
)

// renderError is an error of render's own; a constant, so that the package has no
// work to do when eksboot starts (see the package comment).
type renderError string

func (e renderError) Error() string { return string(e) }

// errOffline is what render's environment answers for anything outside.
const errOffline = renderError("not available: eksboot render is offline")

// errNothing means the user data has neither NodeConfig nor bootstrap.sh call.
const errNothing = renderError("no NodeConfig part and no /etc/eks/bootstrap.sh command line in the user data")

// Options are the simulated node's facts.
type Options struct {
	InstanceType, Region string
	KubeletVersion       kubeletconf.Version
	Profile              string
	Log                  *zap.Logger
	// EKS, when set, makes render look the cluster up (--discover, CallerEKS);
	// otherwise the values discovery would supply are placeholders, reported as such.
	EKS func(ctx context.Context, region string) (eksapi.API, error)
	// ImageFiles are files of the user's own image, by node path, added to (or
	// replacing) the simulated image's (--image-file PATH=LOCAL): a drop-in its
	// build puts in /etc/kubernetes/kubelet/config.json.d or /etc/eks/nodeadm.d, its
	// own kubelet-config.json.
	ImageFiles map[string][]byte
}

// Result is what Render found.
type Result struct {
	// Tree is what the bootstrap writes (node path -> content), Flags the kubelet's
	// command line, From where the configuration came.
	Tree  map[string][]byte
	Flags string
	From  string
	// Eval is the evaluation of the scripts (nil without script or cloud-config).
	Eval *sim.Evaluation
	// After are the bootstrap's files that the scripts changed after it ran, with
	// their final content.
	After map[string][]byte
	// Discovery lists the values the node takes from eks:DescribeCluster, as
	// placeholders (offline) or as looked up (--discover).
	Discovery []string
	// Warnings are printed after the files.
	Warnings []string
	// HostsAtBoot is a local cluster's API server host, whose addresses the node
	// adds to /etc/hosts at boot ("": not a local cluster, or no name to resolve).
	HostsAtBoot string
	// KubeletEffective is the configuration the kubelet runs with when drop-ins
	// apply over kubelet-config.json (nil: the file is all of it), and
	// KubeletConfigFrom the kubelet configurations the user gave (the image's or a
	// script's kubelet-config.json, spec.kubelet.config, the image's drop-ins).
	KubeletEffective  []byte
	KubeletConfigFrom []string
	// KubeletStart says when the node's kubelet starts, and why: init's order for a
	// NodeConfig (bootstrap.KubeletStartFor), else the cloud-init stage that runs
	// the bootstrap.sh call.
	KubeletStart string
}

// Render evaluates raw's scripts on a simulated instance and runs the bootstrap
// their bootstrap.sh call (or the NodeConfig parts) asks for.
func Render(ctx context.Context, raw []byte, o Options) (*Result, error) {
	parts, err := userdata.Parse(raw)
	if err != nil {
		return nil, err
	}
	s := bootstrap.DefaultSettings()
	s.NoRestart, s.ImageProfile = true, o.Profile
	s.IMDSEndpoint = "http://127.0.0.1:9" // never dialled: Env.IMDS is simulated
	s.KubeletVersion = o.KubeletVersion
	r := &Result{}
	// The simulated node: its image's files exist only in memory (the profile's, the
	// bootstrap.sh shim, the user's --image-file), and nothing is written: the plan
	// is printed. The user data's scripts run on them; bootstrap.sh's call sees them
	// as the scripts left them, and so does a NodeConfig's run (its drop-in folders).
	imageFiles, imageDirs := simulatedImage(o, s)
	simImage := make(map[string]sim.File, len(imageFiles))
	for p, f := range imageFiles {
		simImage[p] = sim.File{Data: f.Data, Mode: f.Mode}
	}
	nodeConfig := len(nodeconfig.Sources(parts)) > 0
	disc := &discovery{eks: o.EKS}
	env := offlineEnv(imagefixture.FromMap(imageFiles, imageDirs), o.Log, o.InstanceType, o.Region, disc)
	plan := func(ctx context.Context, req bootstrap.Request, files bootstrap.NodeFiles) (*bootstrap.Node, error) {
		env.Files = files
		f, n, err := bootstrap.ComputeNode(ctx, req.Config, env)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", req.From, err)
		}
		r.HostsAtBoot = ""
		if h := f.APIServerHosts; h != nil && h.AtBoot {
			r.HostsAtBoot = h.Host
		}
		return n, nil
	}
	var last *bootstrap.Node
	var lastReq bootstrap.Request
	opts := sim.Options{
		Image:     simImage,
		ImageDirs: imageDirs,
		Metadata:  SimulatedMetadata(o.InstanceType, o.Region),
	}
	if !nodeConfig {
		opts.Bootstrap = func(ctx context.Context, c sim.Call) (map[string]sim.File, error) {
			req, err := requestFromCall(c, s)
			if err != nil {
				return nil, err
			}
			n, err := plan(ctx, req, nodeFiles(c.Node))
			if err != nil {
				return nil, err
			}
			last, lastReq = n, req
			out := map[string]sim.File{}
			for _, f := range n.Files {
				out[f.Path] = sim.File{Data: f.Data, Mode: f.Mode}
			}
			return out, nil
		}
	}
	ev, evalErr := sim.Evaluate(ctx, parts, opts)
	switch {
	case evalErr != nil && !nodeConfig:
		return nil, fmt.Errorf("user data: %w", evalErr)
	case evalErr != nil:
		r.Warnings = append(r.Warnings, fmt.Sprintf("the user data's scripts: %v (the node is configured by its NodeConfig)", evalErr))
	default:
		r.Eval = ev
	}
	// The node after its user data: its NodeConfig drop-in folders as the scripts
	// left them, read by init's run phase.
	after := imagefixture.FromMap(imageFiles, imageDirs)
	if ev != nil {
		after = nodeFiles(ev.Node)
	}
	dropIns, err := bootstrap.ReadNodeConfigDropIns(after)
	if err != nil {
		return nil, fmt.Errorf("user data: %w", err)
	}
	if !nodeConfig && len(dropIns) > 0 && (ev == nil || len(ev.Calls) == 0) {
		nodeConfig = true // no bootstrap.sh call: the drop-ins configure the node
	}
	if nodeConfig {
		req, _, err := bootstrap.RequestFromNodeConfigs(parts, dropIns, s)
		if err != nil {
			return nil, err
		}
		n, err := plan(ctx, req, after)
		if err != nil {
			return nil, err
		}
		last, lastReq = n, req
		r.KubeletStart = bootstrap.KubeletStartFor(parts, false).String() +
			" (eksboot init; an image's EKSBOOT_KUBELET_START=after-cloud-final keeps it after cloud-final)"
		if ev != nil && len(ev.Calls) > 0 {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s also calls bootstrap.sh, after the NodeConfig configured the node: it bootstraps the node again (render shows the NodeConfig's node)", ev.Calls[0].Where))
		}
	} else if err := checkCalls(parts, ev, r); err != nil {
		return nil, err
	}
	if args := lastReq.Config.LocalDisksArgs; args != nil {
		o.Log.Warn("on the node, the instance-store disks are set up first: " + nodesys.LocalDisksHelper + " " + strings.Join(args, " ") + " (render does not run it)")
	}
	r.fill(last, ev)
	r.From = lastReq.From
	r.Discovery = disc.report()
	return r, nil
}

// simulatedImage is the image render's node starts from: the profile's files, the
// bootstrap.sh shim and the user's --image-file files over them.
func simulatedImage(o Options, s bootstrap.Settings) (map[string]imagefixture.File, []string) {
	image := imagefixture.AL2{}.FS()
	if o.Profile == bootstrap.ProfileAL2023 {
		image = imagefixture.AL2023{KubeletVersion: "v" + s.KubeletVersion.String()}.FS()
	}
	files, dirs := image.Map()
	files[sim.BootstrapPath] = imagefixture.File{Data: assets.BootstrapShim(), Mode: 0o755}
	for p, b := range o.ImageFiles {
		files[p] = imagefixture.File{Data: b, Mode: 0o644}
	}
	return files, dirs
}

// checkCalls refuses user data whose scripts configure no node (no bootstrap.sh
// call) or whose last call has arguments known only at boot, and warns when
// bootstrap.sh runs more than once.
func checkCalls(parts []userdata.Part, ev *sim.Evaluation, r *Result) error {
	if len(ev.Calls) == 0 {
		var types []string
		for _, p := range parts {
			types = append(types, p.Name())
		}
		msg := fmt.Sprintf("%v (%s", errNothing, strings.Join(types, ", "))
		if len(ev.NotSimulated) > 0 {
			msg += "; not simulated: " + strings.Join(ev.NotSimulated, ", ")
		}
		return errors.New(msg + ")")
	}
	c := ev.Calls[len(ev.Calls)-1]
	if len(c.Unknown) > 0 {
		return fmt.Errorf("user data: %w", &sim.UnresolvedError{Where: c.Where, Reason: strings.Join(c.Unknown, "; ")})
	}
	r.KubeletStart = "in " + callStage(c) + ": the bootstrap.sh call of " + c.Where + " starts it"
	if len(ev.Calls) > 1 {
		var where []string
		for _, c := range ev.Calls {
			where = append(where, c.Where)
		}
		r.Warnings = append(r.Warnings, fmt.Sprintf("bootstrap.sh is called %d times (%s): each run rewrites the node; render shows the last", len(ev.Calls), strings.Join(where, "; ")))
	}
	return nil
}

// fill sets r's files, the files the scripts changed after the bootstrap (ev's,
// when scripts ran) and the kubelet's flags and configuration from node n.
func (r *Result) fill(n *bootstrap.Node, ev *sim.Evaluation) {
	r.Tree = map[string][]byte{}
	for _, f := range n.Files {
		r.Tree[f.Path] = f.Data
	}
	if ev != nil {
		r.After = map[string][]byte{}
		for p, f := range ev.Files {
			if old, ok := r.Tree[p]; ok && !bytes.Equal(old, f.Data) {
				r.After[p] = f.Data
			}
		}
	}
	r.Flags = strings.TrimSpace(n.KubeletArgs + " " + n.KubeletExtraArgs)
	r.KubeletEffective, r.KubeletConfigFrom = n.KubeletEffective, n.KubeletConfigFrom
}

// nodeFiles are the simulated node's files n, as the bootstrap reads a node's.
func nodeFiles(n sim.Node) imagefixture.Files {
	files := make(map[string]imagefixture.File, len(n.Files))
	for p, f := range n.Files {
		files[p] = imagefixture.File{Data: f.Data, Mode: f.Mode}
	}
	return imagefixture.FromMap(files, n.Dirs)
}

// callStage is the cloud-init stage that runs the part of a bootstrap.sh call: the
// init stage for a boothook and cloud-config's bootcmd, else cloud-final (scripts,
// runcmd).
func callStage(c sim.Call) string {
	if c.Part.ContentType == userdata.TypeBoothook || strings.Contains(c.Where, " bootcmd") {
		return "cloud-init's init stage (cloud-init.service)"
	}
	return "cloud-final"
}

// requestFromCall interprets a bootstrap.sh call as the shim hands it to eksboot.
func requestFromCall(c sim.Call, s bootstrap.Settings) (bootstrap.Request, error) {
	r := bootstrap.Request{From: c.Where + ": bootstrap.sh"} // errors: Evaluate's caller says "user data: "
	o, err := flags.Parse(c.Eksboot, func(k string) string { return c.Env[k] })
	if err == nil && o.Help {
		err = errors.New("-h/--help: the call prints bootstrap.sh's help and configures nothing")
	}
	if err == nil {
		r.Config, err = bootstrap.ValidateWith(o, s) // the run's settings are render's
	}
	if err != nil {
		return r, fmt.Errorf("%s: %w", r.From, err)
	}
	return r, nil
}

// offlineEnv is a bootstrap environment on a simulated instance with nothing outside
// but, with --discover, EKS.
func offlineEnv(files bootstrap.NodeFiles, log *zap.Logger, instanceType, region string, disc *discovery) *bootstrap.Env {
	inst := simulatedInstance(instanceType, region)
	env := bootstrap.DefaultEnv(nil, log, io.Discard, io.Discard)
	env.Files = files
	env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) {
		return &imds.Facts{
			Region: region, AccountID: inst.AccountID, Domain: inst.Domain, InstanceType: instanceType,
			InstanceID: inst.InstanceID, AvailabilityZone: inst.AvailabilityZone, MAC: inst.MAC, LocalIPv4: inst.LocalIPv4,
			LocalHostname: inst.LocalHostname,
			IPv6s:         []string{"2600:1f14:123:4500::1"}, VPCIPv4CIDRs: inst.VPCIPv4CIDRBlocks,
		}, nil
	}
	env.EC2 = func(context.Context, string, string, bool) (ec2api.API, error) {
		return offlineEC2{inst.LocalHostname}, nil
	}
	env.EKS = func(ctx context.Context, region, _ string, _ bool) (eksapi.API, error) { return disc.api(ctx, region) }
	env.Systemd = func(context.Context) (systemd.Manager, error) { return nil, errOffline }
	env.LookupHost = func(context.Context, string) ([]string, error) {
		return nil, fmt.Errorf("%w: %w", errOffline, bootstrap.ErrNotResolvedHere)
	}
	env.KubeletVersion = func(context.Context) (string, error) { return "", errOffline }
	env.Command = func(context.Context, string, ...string) error { return errOffline }
	env.Geteuid = func() int { return 0 }
	env.Getenv = func(string) string { return "" }
	env.CPUs = func() int {
		if t, ok := maxpods.Info(instanceType); ok && t.VCPUs > 0 {
			return t.VCPUs
		}
		return 2
	}
	env.MemoryBytes = func() (int64, error) { return 0, errOffline } // the table's, when it knows the type
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	return env
}

// offlineEC2 answers as EC2 would in a VPC with the default DNS settings: the
// private DNS name is the local host name. Instance types the table lacks are not
// looked up (the run falls back to 110 and says so).
type offlineEC2 struct{ hostname string }

func (e offlineEC2) PrivateDNSName(context.Context, string) (string, error) { return e.hostname, nil }

func (offlineEC2) InstanceTypeInfo(context.Context, string) (maxpods.TypeInfo, error) {
	return maxpods.TypeInfo{}, errOffline
}
