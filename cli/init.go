package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli/flags"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/userdata"
)

// Phases of `eksboot init` (assets/eksboot-config.service, eksboot-run.service).
const (
	phaseAll    = "all"
	phaseConfig = "config" // write the files, leave systemd alone (before cloud-init)
	phaseRun    = "run"    // write what changed since, then (re)start containerd and kubelet
)

// envHook lets tests adjust the environment of `eksboot init` and `eksboot bootstrap`
// (CPUs, EC2, ...); it does nothing otherwise.
var envHook = func(*bootstrap.Env) {}

// initFlags binds the options of `eksboot init` onto o: --phase and eksboot's own
// (flags.Settings), without bootstrap.sh's (the NodeConfig gives those).
func initFlags(prog string, o *bootstrap.Options, phase *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(phase, "phase", phaseAll, "config: write the files only (before cloud-init); run: write what changed and (re)start containerd and kubelet (after cloud-init); all: both")
	flags.Settings(fs, o)
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	return fs
}

// runInit configures the node from the NodeConfigs of its user data (and the
// drop-ins of /etc/eks/nodeadm.d and /etc/eks/eksboot.d), through the same bootstrap run as bootstrap.sh's
// command line. User data without a NodeConfig is left to cloud-init.
func runInit(prog string, args []string, stdout, stderr io.Writer) int {
	var opts bootstrap.Options
	phase := ""
	fs := initFlags(prog, &opts, &phase)
	if err := flags.CheckValues(fs, args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprintf(stderr, "%s: %v (see --help)\n", prog, err)
		return ExitUsage
	}
	if opts.Help {
		fmt.Fprintf(stdout, "Usage: %s [options]\n\nConfigures this node from the NodeConfig parts of its user data, then nodeadm's drop-ins (/etc/eks/nodeadm.d/*.yaml, *.yml, *.json), then /etc/eks/eksboot.d/*.yaml.\n\nOptions:\n%s", prog, fs.FlagUsages())
		return ExitOK
	}
	if fs.NArg() > 0 || (phase != phaseAll && phase != phaseConfig && phase != phaseRun) {
		fmt.Fprintf(stderr, "%s: --phase %q: want all, config or run, and no arguments (see --help)\n", prog, phase)
		return ExitUsage
	}
	settings, err := bootstrap.CheckSettings(opts, true)
	if err != nil {
		return Finish(prog, err, zap.NewNop(), stderr)
	}
	// The config phase writes the files and only reloads systemd: containerd and
	// the kubelet start after it and must see its drop-ins. The run phase restarts
	// what changed since (they started after the config phase, on its files).
	settings.ReloadOnly = phase == phaseConfig
	s, code := newSession(prog, settings, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.close()
	ctx, env, log := s.ctx, s.env, s.log

	req, ok, err := initRequest(ctx, settings, env)
	if err != nil {
		return s.finish(prog, err, stderr)
	}
	if !ok {
		log.Info("no NodeConfig in the user data, " + bootstrap.NodeadmDropInDir + " or " + bootstrap.EksbootDropInDir + ": nothing to do (scripts are cloud-init's; their /etc/eks/bootstrap.sh runs eksboot)")
		return ExitOK
	}
	log.Info("configuring from " + req.From)
	err = bootstrap.Run(ctx, req.Config, env)
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) { // a bad value of the NodeConfig: bad input, exit 1
		err = errors.New(ue.Error())
	}
	return s.finish(prog, err, stderr)
}

// initRequest reads the user data from IMDS, with the instance's facts, and the
// drop-ins from the root, and merges their NodeConfigs. The run then uses these
// facts: IMDS is read once (env.IMDS answers from them).
func initRequest(ctx context.Context, s bootstrap.Settings, env *bootstrap.Env) (bootstrap.Request, bool, error) {
	endpoint, err := imds.ResolveEndpoint(s.IMDSEndpoint, env.Getenv)
	if err != nil {
		return bootstrap.Request{}, false, err
	}
	fetch := env.IMDS
	allowV1, err := imds.V1Allowed(s.IMDSv1Fallback, env.Getenv)
	if err != nil {
		return bootstrap.Request{}, false, err
	}
	// The IP family is in the user data, not known yet: the IPv6 addresses too.
	facts, err := fetch(ctx, imds.Options{Endpoint: endpoint, Timeout: s.IMDSTimeout, AllowIMDSv1: allowV1, UserData: true, IPv6: true})
	if err != nil {
		return bootstrap.Request{}, false, err
	}
	env.IMDS = func(ctx context.Context, o imds.Options) (*imds.Facts, error) {
		if o.RequireLocalIPv4 && facts.LocalIPv4 == "" {
			return fetch(ctx, o) // not there yet when the user data was read: wait for it
		}
		if o.OnIdentity != nil {
			o.OnIdentity(imds.Identity{
				Region: facts.Region, AccountID: facts.AccountID, InstanceID: facts.InstanceID,
				InstanceType: facts.InstanceType, AvailabilityZone: facts.AvailabilityZone, PrivateIP: facts.LocalIPv4,
			})
		}
		return facts, nil
	}
	var parts []userdata.Part
	if len(facts.UserData) > 0 {
		if parts, err = userdata.Parse(facts.UserData); err != nil {
			return bootstrap.Request{}, false, err
		}
	}
	dropIns, err := bootstrap.ReadNodeConfigDropIns(env.Root)
	if err != nil {
		return bootstrap.Request{}, false, err
	}
	return bootstrap.RequestFromNodeConfigs(parts, dropIns, s)
}
