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
	"github.com/eksboot/eksboot/internal/flaghelp"
	"github.com/eksboot/eksboot/userdata"
)

// Phases of `eksboot init` (assets/eksboot-config.service, eksboot-run.service).
const (
	phaseAll    = "all"
	phaseConfig = "config" // write the files, reload systemd, maybe queue the kubelet (before cloud-init)
	phaseRun    = "run"    // write what changed since, then (re)start containerd and kubelet
)

// --kubelet-start's values, and the variable that gives it when the flag is not
// given (a drop-in of the eksboot units, eksboot-.service.d, sets it for both).
const (
	kubeletStartAuto            = "auto"
	kubeletStartAfterCloudFinal = "after-cloud-final"
	kubeletStartVar             = "EKSBOOT_KUBELET_START"
)

// envHook lets tests adjust the environment of `eksboot init` and `eksboot bootstrap`
// (CPUs, EC2, ...); it does nothing otherwise.
var envHook = func(*bootstrap.Env) {}

// initFlags binds the options of `eksboot init` onto o: --phase and eksboot's own
// (flags.Settings), without bootstrap.sh's (the NodeConfig gives those).
func initFlags(prog string, o *bootstrap.Options, phase, kubeletStart *string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(phase, "phase", phaseAll, "config: write the files (before cloud-init) and, when cloud-init runs no part of the user data, queue the kubelet's start; run: write what changed and (re)start containerd and kubelet (after cloud-final); all: both")
	fs.StringVar(kubeletStart, "kubelet-start", kubeletStartAuto, "auto: the kubelet starts before cloud-final when the user data has only NodeConfig parts, else after it; after-cloud-final: always after it, as with nodeadm [$"+kubeletStartVar+"]")
	flaghelp.SetValues(fs, "kubelet-start", kubeletStartAuto, kubeletStartAfterCloudFinal)
	flags.Settings(fs, o)
	fs.BoolVarP(&o.Help, "help", "h", false, "print this help")
	return fs
}

// runInit configures the node from the NodeConfigs of its user data (and the
// drop-ins of /etc/eks/nodeadm.d and /etc/eks/eksboot.d), through the same bootstrap run as bootstrap.sh's
// command line. User data without a NodeConfig is left to cloud-init.
func runInit(prog string, args []string, stdout, stderr io.Writer) int {
	var opts bootstrap.Options
	phase, kubeletStart := "", ""
	fs := initFlags(prog, &opts, &phase, &kubeletStart)
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
	// The config phase writes the files and reloads systemd: containerd and the
	// kubelet start after it and must see its drop-ins; it restarts nothing, and
	// queues the kubelet's start only when the user data allows it (KubeletStart).
	// The run phase restarts what changed since (they started after the config
	// phase, on its files).
	settings.ReloadOnly = phase == phaseConfig
	s, code := newSession(prog, settings, stdout, stderr)
	if s == nil {
		return code
	}
	defer s.close()
	ctx, env, log := s.ctx, s.env, s.log
	if v := env.Getenv(kubeletStartVar); !fs.Changed("kubelet-start") && v != "" {
		kubeletStart = v
	}
	if kubeletStart != kubeletStartAuto && kubeletStart != kubeletStartAfterCloudFinal {
		return s.finish(prog, bootstrap.Usagef("--kubelet-start (or $%s) %q: want %s or %s", kubeletStartVar, kubeletStart, kubeletStartAuto, kubeletStartAfterCloudFinal), stderr)
	}

	req, ok, err := initRequest(ctx, settings, kubeletStart == kubeletStartAfterCloudFinal, env)
	if err != nil {
		return s.finish(prog, err, stderr)
	}
	if !ok {
		log.Info("no NodeConfig in the user data, " + bootstrap.NodeadmDropInDir + " or " + bootstrap.EksbootDropInDir + ": nothing to do (scripts are cloud-init's; their /etc/eks/bootstrap.sh runs eksboot)")
		return ExitOK
	}
	log.Info("configuring from " + req.From)
	log.Info("kubelet start "+req.Config.KubeletStart.String(), zap.String("by", startedBy(req.Config.KubeletStart, phase)))
	err = bootstrap.Run(ctx, req.Config, env)
	var ue *bootstrap.UsageError
	if errors.As(err, &ue) { // a bad value of the NodeConfig: bad input, exit 1
		err = errors.New(ue.Error())
	}
	return s.finish(prog, err, stderr)
}

// startedBy says which unit starts the kubelet in this phase, for the journal's line
// on its order.
func startedBy(ks bootstrap.KubeletStart, phase string) string {
	switch {
	case phase == phaseAll:
		return "this run"
	case ks.Early && phase == phaseConfig:
		return "this phase, queued: it starts once this phase has ended"
	case ks.Early:
		return "the config phase (this phase starts it if it is not running, and checks that it stays up)"
	case phase == phaseConfig:
		return "eksboot-run.service, after cloud-final"
	}
	return "this phase"
}

// initRequest reads the user data from IMDS, with the instance's facts, and the
// drop-ins from the root, and merges their NodeConfigs. The run then uses these
// facts: IMDS is read once (env.IMDS answers from them). The request's settings
// carry when the kubelet starts (bootstrap.KubeletStartFor the user data's parts).
func initRequest(ctx context.Context, s bootstrap.Settings, afterCloudFinal bool, env *bootstrap.Env) (bootstrap.Request, bool, error) {
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
	s.KubeletStart = bootstrap.KubeletStartFor(parts, afterCloudFinal)
	return bootstrap.RequestFromNodeConfigs(parts, dropIns, s)
}
