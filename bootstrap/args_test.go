package bootstrap

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func noEnv(string) string { return "" }

// parseArgs builds the Options of a bootstrap command line for the tests, without
// pflag (package bootstrap has none; cli/flags.Parse is the command's parser and its
// tests check it): --name value and --name=value, true/false flags with no value or
// =true/=false, CLUSTER_NAME anywhere, -- ends the flags; then Options.Complete, as
// Parse does. Its errors are UsageErrors.
func parseArgs(args []string, getenv func(string) string) (Options, error) {
	o := DefaultOptions()
	strs := map[string]*string{
		"root": &o.Root, "imds-endpoint": &o.IMDSEndpoint, "kubelet-version": &o.KubeletVersion,
		"image-profile": &o.ImageProfile, "log-format": &o.LogFormat, "max-pods-mode": &o.MaxPodsMode,
	}
	for _, f := range scriptFlags {
		strs[f.Name] = f.Field(&o)
	}
	bools := map[string]*bool{
		"dry-run": &o.DryRun, "no-restart": &o.NoRestart, "imds-v1-fallback": &o.IMDSv1Fallback, "help": &o.Help,
		"graceful-shutdown": &o.GracefulShutdown, "max-pods-custom-networking": &o.MaxPodsCustomNetworking,
		"max-pods-security-groups-for-pods": &o.MaxPodsSecurityGroupsForPods, "max-pods-uncapped": &o.MaxPodsUncapped,
		"kube-reserved-from-effective-max-pods": &o.KubeReservedFromEffectiveMaxPods,
	}
	durations := map[string]*time.Duration{
		"imds-timeout": &o.IMDSTimeout, "discovery-timeout": &o.DiscoveryTimeout, "systemd-timeout": &o.SystemdTimeout,
		"shutdown-grace-period": &o.ShutdownGracePeriod, "shutdown-grace-period-critical-pods": &o.ShutdownGracePeriodCriticalPods,
	}
	given := map[string]bool{}
	var pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if a == "-h" {
			a = "--help"
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok || name == "" {
			pos = append(pos, a)
			continue
		}
		name, value, hasValue := strings.Cut(name, "=")
		given[name] = true
		if b, ok := bools[name]; ok {
			v, err := strconv.ParseBool(value)
			if !hasValue {
				v, err = true, nil
			}
			if err != nil {
				return o, Usagef("invalid argument %q for --%s", value, name)
			}
			*b = v
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return o, Usagef("flag needs an argument: --%s", name)
			}
			i++
			value = args[i]
		}
		var err error
		switch {
		case strs[name] != nil:
			*strs[name] = value
		case durations[name] != nil:
			*durations[name], err = time.ParseDuration(value)
		case name == "max-pods-max-eni":
			o.MaxPodsMaxENI, err = strconv.Atoi(value)
		default:
			return o, Usagef("unknown flag: --%s", name)
		}
		if err != nil {
			return o, Usagef("invalid argument %q for --%s: %v", value, name, err)
		}
	}
	if o.Help {
		return o, nil
	}
	o.Complete(func(name string) bool { return given[name] }, getenv)
	if len(pos) > 1 {
		return o, Usagef("too many arguments %q", pos)
	}
	if len(pos) == 1 {
		o.ClusterName = pos[0]
	}
	return o, nil
}

// fromArgs is parseArgs, then Validate: what the bootstrap command does, without pflag.
func fromArgs(args []string, getenv func(string) string) (*Config, error) {
	o, err := parseArgs(args, getenv)
	if err != nil {
		return nil, err
	}
	return Validate(o)
}

// TestParseArgsKnowsEveryFlag: the tests' parser takes every flag of the command
// (the names cli/flags' test lists), so the tests run what the command would.
func TestParseArgsKnowsEveryFlag(t *testing.T) {
	for _, name := range []string{
		"root", "dry-run", "no-restart", "imds-endpoint", "kubelet-version", "image-profile", "log-format", "imds-timeout",
		"discovery-timeout", "imds-v1-fallback", "systemd-timeout", "graceful-shutdown", "shutdown-grace-period",
		"shutdown-grace-period-critical-pods", "max-pods-mode", "max-pods-custom-networking", "max-pods-security-groups-for-pods",
		"max-pods-max-eni", "max-pods-uncapped", "kube-reserved-from-effective-max-pods",
	} {
		value := "1"
		switch name {
		case "imds-timeout", "discovery-timeout", "systemd-timeout", "shutdown-grace-period", "shutdown-grace-period-critical-pods":
			value = "1s"
		}
		if _, err := parseArgs([]string{"c", "--" + name + "=" + value}, noEnv); err != nil {
			t.Errorf("--%s: %v", name, err)
		}
	}
	for _, f := range scriptFlags {
		if _, err := parseArgs([]string{"c", "--" + f.Name, "x"}, noEnv); err != nil {
			t.Errorf("--%s: %v", f.Name, err)
		}
	}
}
