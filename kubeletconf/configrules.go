package kubeletconf

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf/kubeletgates"
)

// CheckConfig judges the kubelet configuration cfg as the kubelet of version v
// would before it runs: its feature gates against that minor's (kubeletgates), the
// eviction thresholds, the enumerations (the CPU, memory and topology managers, the
// cgroup driver, the hairpin mode, node allocatable enforcement) and the ranges its
// own validation holds (ValidateKubeletConfiguration, the eviction and reservation
// parsers). cfg is the whole configuration the kubelet gets, its flags laid over its
// file; from names the input that set a top-level field ("spec.kubelet.config", the
// flag that set it) and "" for eksboot's own values, which are judged too, under
// the name of the file. Problems, one line each, are what that kubelet refuses;
// warnings what it accepts but should not be given (a gate locked to its default, or
// deprecated). A kubelet newer than the gate table is judged by the newest minor's
// gates, an unknown gate then being a warning; one older than the table's gates are
// not judged. It is pure.
func CheckConfig(v Version, cfg *KubeletConfiguration, from func(field string) string) (warnings, problems []string) {
	c := configJudge{v: v, cfg: cfg, from: from}
	c.gates()
	c.eviction()
	c.reserved("kubeReserved", cfg.KubeReserved)
	c.reserved("systemReserved", cfg.SystemReserved)
	c.enums()
	c.ranges()
	return c.warnings, c.problems
}

// configJudge holds CheckConfig's state.
type configJudge struct {
	v                  Version
	cfg                *KubeletConfiguration
	from               func(string) string
	warnings, problems []string
}

// name is how a message names field (a top-level field, then a path in it).
func (c *configJudge) name(field string, rest ...string) string {
	src := c.from(field)
	p := strings.Join(append([]string{field}, rest...), ".")
	switch {
	case src == "":
		return ConfigPath + " " + p
	case strings.HasPrefix(src, "spec."):
		return src + "." + p
	default:
		return src + " (" + p + ")"
	}
}

func (c *configJudge) bad(field string, rest []string, format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf("%s: kubelet %s refuses it: ", c.name(field, rest...), c.v.minorString())+fmt.Sprintf(format, args...))
}

// gates judges featureGates.
func (c *configJudge) gates() {
	minors := kubeletgates.Minors()
	last := minors[len(minors)-1]
	table, newer := c.v.Minor, false
	switch {
	case c.v.Major == 1 && kubeletgates.Known(c.v.Minor):
	case c.v.Major > 1 || c.v.Major == 1 && c.v.Minor > last:
		table, newer = last, true
	default: // older than the table
		return
	}
	for _, name := range sortedKeys(c.cfg.FeatureGates) {
		value := c.cfg.FeatureGates[name]
		at := []string{gateName(name)}
		g, ok := kubeletgates.Lookup(table, name)
		switch {
		case !ok && newer:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: kubelet %s is newer than the feature gates eksboot knows (%s, from %s), which have no %s; the kubelet may refuse it", c.name("featureGates", at...), c.v.minorString(), minorString(table), kubeletgates.Version(table), gateName(name)))
		case !ok:
			if since, removed := kubeletgates.Removed(table, name); removed {
				c.bad("featureGates", at, "it has no feature gate %s (removed in %s): remove it", gateName(name), minorString(since))
			} else if near := nearestGate(table, name); near != "" {
				c.bad("featureGates", at, "it has no feature gate %s (\"unrecognized feature gate\"; did you mean %s?)", gateName(name), near)
			} else {
				c.bad("featureGates", at, "it has no feature gate %s (\"unrecognized feature gate\")", gateName(name))
			}
		case g.Locked && value != g.Default:
			c.bad("featureGates", at, "%s is %s and locked to %t", gateName(name), g.Stage, g.Default)
		case g.Locked:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is %s and locked to %t in kubelet %s: setting it does nothing, and a later kubelet will not know it; remove it", c.name("featureGates", at...), gateName(name), g.Stage, g.Default, minorString(table)))
		case g.Stage == kubeletgates.Deprecated:
			c.warnings = append(c.warnings, fmt.Sprintf("%s: %s is deprecated in kubelet %s and will be removed", c.name("featureGates", at...), gateName(name), minorString(table)))
		}
	}
}

// gateName is a feature gate's name for a message: as it is when it is a word of
// letters and digits (gate names are, and some are longer than quote.Name shows),
// else quoted.
func gateName(s string) string {
	if s == "" || len(s) > 128 || strings.ContainsFunc(s, func(r rune) bool { return r > 'z' || !isAlnumByte(byte(r)) }) {
		return quote.Value(s)
	}
	return s
}

// nearestGate is the gate of kubelet 1.<minor> closest to name (by edit distance,
// case aside), when it is close, or "".
func nearestGate(minor int, name string) string {
	best, bestD := "", 3
	for _, g := range kubeletgates.Gates(minor) {
		if d := editDistance(strings.ToLower(name), strings.ToLower(g.Name), bestD); d < bestD && 2*d < len(name) {
			best, bestD = g.Name, d
		}
	}
	return best
}

// evictionSignals are the kubelet's eviction signals; containerFSSignals came in
// 1.29.
var (
	evictionSignals = []string{
		"allocatableMemory.available", "imagefs.available", "imagefs.inodesFree", "memory.available",
		"nodefs.available", "nodefs.inodesFree", "pid.available",
	}
	containerFSSignals = []string{"containerfs.available", "containerfs.inodesFree"}
)

// signal checks an eviction signal name.
func (c *configJudge) signal(field, sig string) bool {
	if slices.Contains(evictionSignals, sig) || c.v.AtLeast(1, 29) && slices.Contains(containerFSSignals, sig) {
		return true
	}
	known := slices.Clone(evictionSignals)
	if c.v.AtLeast(1, 29) {
		known = append(known, containerFSSignals...)
	}
	slices.Sort(known)
	hint := ""
	for _, k := range known {
		if editDistance(sig, k, 3) < 3 {
			hint = fmt.Sprintf(" (did you mean %s?)", k)
		}
	}
	c.bad(field, []string{quote.Name(sig)}, "%s is not an eviction signal%s; want one of %s", quote.Name(sig), hint, strings.Join(known, ", "))
	return false
}

// eviction judges the eviction thresholds as the kubelet's ParseThresholdConfig.
func (c *configJudge) eviction() {
	for _, f := range []struct {
		field string
		m     map[string]string
	}{{"evictionHard", c.cfg.EvictionHard}, {"evictionSoft", c.cfg.EvictionSoft}} {
		for _, sig := range sortedKeys(f.m) {
			if !c.signal(f.field, sig) {
				continue
			}
			if err := thresholdValue(f.m[sig]); err != nil {
				c.bad(f.field, []string{quote.Name(sig)}, "%v", err)
			}
		}
	}
	for _, sig := range sortedKeys(c.cfg.EvictionSoftGracePeriod) {
		if !c.signal("evictionSoftGracePeriod", sig) {
			continue
		}
		if d, err := time.ParseDuration(c.cfg.EvictionSoftGracePeriod[sig]); err != nil || d < 0 {
			c.bad("evictionSoftGracePeriod", []string{quote.Name(sig)}, "%s: want a duration such as 1m30s", quote.Value(c.cfg.EvictionSoftGracePeriod[sig]))
		}
	}
	for _, sig := range sortedKeys(c.cfg.EvictionMinimumReclaim) {
		if !c.signal("evictionMinimumReclaim", sig) {
			continue
		}
		if err := reclaimValue(c.cfg.EvictionMinimumReclaim[sig]); err != nil {
			c.bad("evictionMinimumReclaim", []string{quote.Name(sig)}, "%v", err)
		}
	}
	for _, sig := range sortedKeys(c.cfg.EvictionSoft) {
		if _, ok := c.cfg.EvictionSoftGracePeriod[sig]; !ok && (slices.Contains(evictionSignals, sig) || slices.Contains(containerFSSignals, sig)) {
			c.bad("evictionSoft", []string{quote.Name(sig)}, "a soft threshold needs a grace period: set evictionSoftGracePeriod.%s", sig)
		}
	}
}

// thresholdValue checks an evictionHard or evictionSoft value: a percentage from 0%
// to 100% or a positive quantity.
func thresholdValue(s string) error {
	if strings.HasSuffix(s, "%") {
		if s == "0%" || s == "100%" {
			return nil
		}
		p, err := strconv.ParseFloat(strings.TrimRight(s, "%"), 32)
		if err != nil || p < 0 || p > 100 {
			return fmt.Errorf("%s: want a percentage from 0%% to 100%% or a quantity such as 100Mi", quote.Value(s))
		}
		return nil
	}
	if !isQuantity(s) || quantitySign(s) <= 0 {
		return fmt.Errorf("%s: want a positive quantity such as 100Mi, or a percentage such as 10%%", quote.Value(s))
	}
	return nil
}

// reclaimValue checks an evictionMinimumReclaim value: a positive percentage or a
// quantity of at least zero.
func reclaimValue(s string) error {
	if strings.HasSuffix(s, "%") {
		p, err := strconv.ParseFloat(strings.TrimRight(s, "%"), 32)
		if err != nil || p <= 0 {
			return fmt.Errorf("%s: want a positive percentage or a quantity such as 500Mi", quote.Value(s))
		}
		return nil
	}
	if !isQuantity(s) || quantitySign(s) < 0 {
		return fmt.Errorf("%s: want a quantity such as 500Mi, or a positive percentage", quote.Value(s))
	}
	return nil
}

// quantitySign is the sign of a quantity isQuantity accepts: -1, 0 or 1.
func quantitySign(s string) int {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= '1' && c <= '9' {
			if s[0] == '-' {
				return -1
			}
			return 1
		}
		if c != '0' && c != '.' && c != '+' && c != '-' {
			break // the suffix
		}
	}
	return 0
}

// reserved judges kubeReserved or systemReserved as the kubelet's parseResourceList.
func (c *configJudge) reserved(field string, m map[string]string) {
	for _, k := range sortedKeys(m) {
		switch k {
		case "cpu", "memory", "ephemeral-storage", "pid":
			if v := m[k]; !isQuantity(v) || quantitySign(v) < 0 {
				c.bad(field, []string{quote.Name(k)}, "%s: want a quantity of at least 0", quote.Value(v))
			}
		default:
			c.bad(field, []string{quote.Name(k)}, "cannot reserve %s: want cpu, memory, ephemeral-storage or pid", quote.Name(k))
		}
	}
}

// enums judges the fields that take one of a few words.
func (c *configJudge) enums() {
	cfg := c.cfg
	for _, e := range []struct {
		field, value string
		allowed      []string
	}{
		{"cpuManagerPolicy", cfg.CPUManagerPolicy, []string{"none", "static"}},
		{"memoryManagerPolicy", cfg.MemoryManagerPolicy, []string{"None", "Static"}},
		{"topologyManagerPolicy", cfg.TopologyManagerPolicy, []string{"none", "best-effort", "restricted", "single-numa-node"}},
		{"topologyManagerScope", cfg.TopologyManagerScope, []string{"container", "pod"}},
		{"cgroupDriver", cfg.CgroupDriver, []string{"cgroupfs", "systemd"}},
		{"hairpinMode", cfg.HairpinMode, []string{"promiscuous-bridge", "hairpin-veth", "none"}},
		{"memorySwap", cfg.MemorySwap.SwapBehavior, []string{"NoSwap", "LimitedSwap"}},
		{"logging", cfg.Logging.Format, []string{"text", "json"}},
	} {
		if e.value == "" || slices.Contains(e.allowed, e.value) {
			continue
		}
		var at []string
		switch e.field {
		case "memorySwap":
			at = []string{"swapBehavior"}
		case "logging":
			at = []string{"format"}
		}
		c.bad(e.field, at, "%s: want %s", quote.Value(e.value), orList(e.allowed))
	}
	seen := map[string]bool{}
	for _, val := range cfg.EnforceNodeAllocatable {
		switch {
		case seen[val]:
			c.bad("enforceNodeAllocatable", nil, "%s is listed twice", quote.Value(val))
		case !slices.Contains([]string{"pods", "system-reserved", "system-reserved-compressible", "kube-reserved", "kube-reserved-compressible", "none"}, val):
			c.bad("enforceNodeAllocatable", nil, "%s: want pods, system-reserved, system-reserved-compressible, kube-reserved, kube-reserved-compressible or none", quote.Value(val))
		case val == "none" && len(cfg.EnforceNodeAllocatable) > 1:
			c.bad("enforceNodeAllocatable", nil, "none cannot be listed with others")
		case (val == "system-reserved" || val == "system-reserved-compressible") && cfg.SystemReservedCgroup == "":
			c.bad("enforceNodeAllocatable", nil, "%s needs systemReservedCgroup", val)
		case (val == "kube-reserved" || val == "kube-reserved-compressible") && cfg.KubeReservedCgroup == "":
			c.bad("enforceNodeAllocatable", nil, "%s needs kubeReservedCgroup", val)
		}
		seen[val] = true
	}
}

// ranges judges the numbers ValidateKubeletConfiguration holds to a range, with the
// kubelet's defaults for what is unset.
func (c *configJudge) ranges() {
	cfg := c.cfg
	ptr := func(p *int32, def int32) int32 {
		if p == nil {
			return def
		}
		return *p
	}
	notNegative := func(field string, v int32) {
		if v < 0 {
			c.bad(field, nil, "%d: want 0 or more", v)
		}
	}
	within := func(field string, v, lo, hi int32) {
		if v < lo || v > hi {
			c.bad(field, nil, "%d: want %d to %d", v, lo, hi)
		}
	}
	notNegative("maxPods", cfg.MaxPods)
	notNegative("podsPerCore", cfg.PodsPerCore)
	notNegative("eventRecordQPS", ptr(cfg.EventRecordQPS, 50))
	notNegative("eventBurst", cfg.EventBurst)
	notNegative("kubeAPIQPS", ptr(cfg.KubeAPIQPS, 50))
	notNegative("kubeAPIBurst", cfg.KubeAPIBurst)
	notNegative("registryPullQPS", ptr(cfg.RegistryPullQPS, 5))
	notNegative("registryBurst", cfg.RegistryBurst)
	notNegative("maxOpenFiles", int32(max(math.MinInt32, min(math.MaxInt32, cfg.MaxOpenFiles))))
	if cfg.Port != 0 {
		within("port", cfg.Port, 1, 65535)
	}
	within("readOnlyPort", cfg.ReadOnlyPort, 0, 65535)
	within("healthzPort", ptr(cfg.HealthzPort, 10248), 0, 65535)
	within("oomScoreAdj", ptr(cfg.OOMScoreAdj, -999), -1000, 1000)
	high, low := ptr(cfg.ImageGCHighThresholdPercent, 85), ptr(cfg.ImageGCLowThresholdPercent, 80)
	within("imageGCHighThresholdPercent", high, 0, 100)
	within("imageGCLowThresholdPercent", low, 0, 100)
	if low >= high {
		field := "imageGCLowThresholdPercent"
		if cfg.ImageGCLowThresholdPercent == nil {
			field = "imageGCHighThresholdPercent"
		}
		c.bad(field, nil, "imageGCLowThresholdPercent %d must be less than imageGCHighThresholdPercent %d", low, high)
	}
	if n := ptr(cfg.NodeStatusMaxImages, 50); n < -1 {
		c.bad("nodeStatusMaxImages", nil, "%d: want -1 or more", n)
	}
	if n := ptr(cfg.ContainerLogMaxFiles, 5); n <= 1 {
		c.bad("containerLogMaxFiles", nil, "%d: want 2 or more", n)
	}
	if n := ptr(cfg.ContainerLogMaxWorkers, 1); n < 1 {
		c.bad("containerLogMaxWorkers", nil, "%d: want 1 or more", n)
	}
	if s := cfg.ContainerLogMaxSize; s != "" && (!isQuantity(s) || quantitySign(s) <= 0) {
		c.bad("containerLogMaxSize", nil, "%s: want a positive quantity such as 10Mi", quote.Value(s))
	}
	if n := cfg.NodeLeaseDurationSeconds; n < 0 {
		c.bad("nodeLeaseDurationSeconds", nil, "%d: want 1 or more", n)
	}
	if p := cfg.MaxParallelImagePulls; p != nil && *p < 1 {
		c.bad("maxParallelImagePulls", nil, "%d: want 1 or more", *p)
	}
	c.durations()
	c.paths()
}

// durations judges the durations ValidateKubeletConfiguration holds to a range.
func (c *configJudge) durations() {
	cfg := c.cfg
	for _, f := range []struct {
		field string
		d     time.Duration
	}{{"shutdownGracePeriod", cfg.ShutdownGracePeriod.Duration}, {"shutdownGracePeriodCriticalPods", cfg.ShutdownGracePeriodCriticalPods.Duration}} {
		if f.d < 0 || f.d > 0 && f.d < time.Second {
			c.bad(f.field, nil, "%v: want 0 or at least 1s", f.d)
		}
	}
	if total, critical := cfg.ShutdownGracePeriod.Duration, cfg.ShutdownGracePeriodCriticalPods.Duration; critical > total {
		field := "shutdownGracePeriodCriticalPods"
		if c.from(field) == "" {
			field = "shutdownGracePeriod"
		}
		c.bad(field, nil, "shutdownGracePeriodCriticalPods %v is longer than shutdownGracePeriod %v: set both", critical, total)
	}
	if d := cfg.ContainerLogMonitorInterval; d != nil && d.Duration < 3*time.Second {
		c.bad("containerLogMonitorInterval", nil, "%v: want at least 3s", d.Duration)
	}
}

// paths judges the paths and CPU lists the kubelet parses at start.
func (c *configJudge) paths() {
	cfg := c.cfg
	if p := cfg.PodLogsDir; p != "" && (!strings.HasPrefix(p, "/") || path.Clean(p) != p || strings.ContainsFunc(p, func(r rune) bool { return r > 127 })) {
		c.bad("podLogsDir", nil, "%s: want a clean absolute path in ASCII", quote.Value(p))
	}
	if s := cfg.ReservedSystemCPUs; s != "" && !isCPUSet(s) {
		c.bad("reservedSystemCPUs", nil, "%s: want a CPU list such as 0-1,4", quote.Value(s))
	}
}

// isCPUSet reports whether s is a CPU list the kubelet's cpuset.Parse accepts:
// comma-separated CPU numbers and ranges low-high (low <= high).
func isCPUSet(s string) bool {
	for _, r := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		if err != nil || a < 0 {
			return false
		}
		if isRange {
			b, err := strconv.Atoi(hi)
			if err != nil || b < a {
				return false
			}
		}
	}
	return true
}

// orList is "a, b or c".
func orList(words []string) string {
	if len(words) == 1 {
		return words[0]
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
