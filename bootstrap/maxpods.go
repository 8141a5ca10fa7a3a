package bootstrap

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/maxpods/expr"
)

// pathENIMaxPods is the node's own eni-max-pods.txt: rows for instance types the
// embedded table lacks (the user-data habit of appending to it keeps working).
const pathENIMaxPods = "/etc/eks/eni-max-pods.txt"

// ec2TypeTimeout bounds ec2:DescribeInstanceTypes, retries included (the SDK's
// retryer bounds the attempts to ec2api.MaxAttempts), so a hung EC2 delays the boot
// by at most this much before max pods falls back. It is also the budget of the
// waits after throttling (ec2api.ThrottleDelayWithin: the first retry within the
// first half of what is left, the last within the second half), which spread a
// herd of nodes booting at once so that each gets its answer (docs/performance.md);
// an unreachable EC2 fails fast, with the SDK's short delays.
const ec2TypeTimeout = 90 * time.Second

// The values of --max-pods-mode.
const (
	modeENIMaxPods       = "eni-max-pods"
	modeSecondaryIP      = "secondary-ip"
	modePrefixDelegation = "prefix-delegation"
	modeIPv6             = "ipv6"
)

// MaxPodsModes are --max-pods-mode's (and spec.maxPods.mode's) values, the default first.
func MaxPodsModes() []string {
	return []string{modeENIMaxPods, modeSecondaryIP, modePrefixDelegation, modeIPv6}
}

// maxPodsInput is how max pods is to be worked out, from either front end: the
// --max-pods-* flags or a NodeConfig's spec.maxPods, with the names that errors give
// each value.
type maxPodsInput struct {
	Mode                                    string
	CustomNetworking, SecurityGroupsForPods bool
	MaxENI                                  int
	Uncapped, KubeReservedFromEffective     bool
	ExtraArgs                               []string // the kubelet's extra arguments, one each
	names                                   maxPodsNames
}

// maxPodsNames are the user's names of the max-pods values.
type maxPodsNames struct {
	mode, customNetworking, securityGroupsForPods, maxENI, uncapped, kubeReserved, extraArgs, ipFamily string
}

var (
	maxPodsFlagNames = maxPodsNames{
		"--max-pods-mode", "--max-pods-custom-networking", "--max-pods-security-groups-for-pods",
		"--max-pods-max-eni", "--max-pods-uncapped", "--kube-reserved-from-effective-max-pods", "--kubelet-extra-args", "--ip-family ipv6",
	}
	maxPodsNodeConfigNames = maxPodsNames{
		"spec.maxPods.mode", "spec.maxPods.customNetworking", "spec.maxPods.securityGroupsForPods",
		"spec.maxPods.maxENI", "spec.maxPods.uncapped", "spec.maxPods.kubeReservedFromEffectiveMaxPods", "spec.kubelet.flags", "an IPv6 spec.cluster.cidr",
	}
)

// setMaxPods validates in into c.MaxPodsOptions, c.KubeReservedFromEffective and
// c.KubeletMaxPods, returning one problem per bad value.
func (c *Config) setMaxPods(in maxPodsInput) []string {
	n := in.names
	var problems []string
	bad := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	c.MaxPodsMode = in.Mode
	switch in.Mode {
	case modeENIMaxPods:
		c.MaxPodsOptions = maxpods.Options{Uncapped: true}
	case modeSecondaryIP:
	case modePrefixDelegation:
		c.MaxPodsOptions.PrefixDelegation = true
	case modeIPv6:
		c.MaxPodsOptions.IPv6 = true
		if c.IPFamily != "ipv6" {
			bad("%s ipv6 needs %s (on an IPv4 cluster pods are limited by the ENIs: use secondary-ip or prefix-delegation)", n.mode, n.ipFamily)
		}
	default:
		bad("%s %s: want eni-max-pods, secondary-ip, prefix-delegation or ipv6", n.mode, quote.Value(in.Mode))
	}
	computed := in.Mode == modeSecondaryIP || in.Mode == modePrefixDelegation
	for _, f := range []struct {
		name string
		set  bool
	}{
		{n.customNetworking, in.CustomNetworking},
		{n.securityGroupsForPods, in.SecurityGroupsForPods},
		{n.maxENI, in.MaxENI != 0},
		{n.uncapped, in.Uncapped},
	} {
		if f.set && !computed {
			bad("%s needs %s secondary-ip or prefix-delegation (not %s)", f.name, n.mode, in.Mode)
		}
	}
	if in.MaxENI < 0 {
		bad("%s %d: want the number of ENIs the VPC CNI may use (MAX_ENI), 1 or more", n.maxENI, in.MaxENI)
	}
	if computed {
		c.MaxPodsOptions.CustomNetworking = in.CustomNetworking
		c.MaxPodsOptions.SecurityGroupsForPods = in.SecurityGroupsForPods
		c.MaxPodsOptions.MaxENI = max(in.MaxENI, 0)
		c.MaxPodsOptions.Uncapped = in.Uncapped
	}
	c.KubeReservedFromEffective = in.KubeReservedFromEffective
	if v, err := extraArgsMaxPods(in.ExtraArgs); err != nil && c.KubeReservedFromEffective {
		bad("%s: %s %v", n.kubeReserved, n.extraArgs, err)
	} else if err == nil {
		c.KubeletMaxPods = v
	}
	return problems
}

// extraArgsMaxPods returns the kubelet's --max-pods among the extra arguments (the
// last one wins, as with the kubelet's flags; the value as the kubelet's int32 flag
// reads it), or 0 when there is none.
func extraArgsMaxPods(words []string) (int, error) {
	a, ok := kubeletconf.FindArg(words, "max-pods")
	switch {
	case !ok:
		return 0, nil
	case !a.HasValue:
		return 0, fmt.Errorf("--max-pods has no value")
	}
	n, err := strconv.ParseInt(a.Value, 0, 32)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("--max-pods %s: want a whole number of pods, 1 or more", quote.Value(a.Value))
	}
	return int(n), nil
}

// reservedMaxPods is the max pods that kubeReserved memory is sized for: bootstrap.sh's
// (the computed value, whatever the kubelet ends up running), or with
// --kube-reserved-from-effective-max-pods what the kubelet will really run: --max-pods
// of --kubelet-extra-args, else the computed value when --use-max-pods writes it, else
// the kubelet's default.
func reservedMaxPods(c *Config, computed int) int {
	switch {
	case !c.KubeReservedFromEffective:
		return computed
	case c.KubeletMaxPods > 0:
		return c.KubeletMaxPods
	case c.UseMaxPods:
		return computed
	}
	return maxpods.Default
}

// maxPods works out the node's max pods with maxpods.Resolve: the embedded table; for
// a type it lacks, the node's /etc/eks/eni-max-pods.txt (malformed lines are reported
// and skipped), then ec2:DescribeInstanceTypes under ec2TypeTimeout, then 110 with a
// warning, where bootstrap.sh failed the boot. It returns the number and where it came
// from, with the formula.
func maxPods(ctx context.Context, c *Config, env *Env, client func() (ec2api.API, error), instanceType string, cpus int, warn func(string)) (int, string) {
	req := maxpods.Request{InstanceType: instanceType, Options: c.MaxPodsOptions, RowsPath: pathENIMaxPods, NodeCPUs: cpus}
	if b, err := optional(env.Files.ReadFile(pathENIMaxPods)); err != nil {
		warn(fmt.Sprintf("%s: %v; its rows are not used", pathENIMaxPods, err))
	} else if b != nil {
		var bad []*maxpods.RowError
		req.Rows, bad = maxpods.ParseRows(b)
		for _, e := range bad {
			warn(fmt.Sprintf("%s:%d: %s; the line is skipped", pathENIMaxPods, e.Line, e.Reason))
		}
	}
	req.Describe = func(ctx context.Context, t string) (maxpods.TypeInfo, error) {
		api, err := client()
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		ctx, cancel := context.WithTimeout(ctx, ec2TypeTimeout)
		defer cancel()
		return api.InstanceTypeInfo(ctx, t)
	}
	a := maxpods.Resolve(ctx, req)
	for _, w := range a.Warnings {
		warn(w)
	}
	source := a.Source
	if a.Result != nil {
		source += " (" + strings.Join(append([]string{a.Result.Formula}, a.Result.Steps...), "; ") + ")"
	}
	if c.MaxPodsExpression != "" {
		return maxPodsExpression(c.MaxPodsExpression, a, source, warn)
	}
	return a.MaxPods, source
}

// maxPodsExpression evaluates spec.kubelet.maxPodsExpression over the instance type's
// facts. As nodeadm does, an expression that cannot be evaluated (no facts for the
// type, a result out of range) leaves the standard max pods, with a warning.
func maxPodsExpression(e string, a maxpods.Answer, source string, warn func(string)) (int, string) {
	if a.Facts == nil {
		warn(fmt.Sprintf("spec.kubelet.maxPodsExpression not evaluated: no ENI facts for the instance type (max pods from %s); using %d", a.Source, a.MaxPods))
		return a.MaxPods, source
	}
	vars, err := expr.VarsFor(*a.Facts)
	if err == nil {
		var n int32
		if n, err = expr.Evaluate(e, vars); err == nil {
			return int(n), fmt.Sprintf("spec.kubelet.maxPodsExpression %q over %s", e, vars)
		}
	}
	warn(fmt.Sprintf("%v; using the standard max pods %d", err, a.MaxPods))
	return a.MaxPods, source
}
