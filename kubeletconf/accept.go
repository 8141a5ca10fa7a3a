package kubeletconf

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf/kubeletflags"
)

// UserArgs is what CheckArgs makes of a user's kubelet arguments for one kubelet.
type UserArgs struct {
	// Words are the arguments to give the kubelet: the user's, without the dropped
	// ones. Dropped says whether any was.
	Words   []string
	Dropped bool
	// Warnings name what was dropped and why, and what eksboot could not judge.
	Warnings []string
	// Config holds the KubeletConfiguration fields the arguments set, as decoded
	// JSON, the way the kubelet lays its flags over its configuration file (a map
	// flag replaces the file's map, except featureGates, which merge key by key), for
	// CheckConfig; From names, for each field, the argument that set it.
	Config map[string]any
	From   map[string]string
}

// CheckArgs judges a user's kubelet arguments (after systemd's split, one argument
// each) for the kubelet of version v, as that kubelet would: the flags it has
// (kubeletflags' table of its minor), their syntax, and the values it checks before
// it starts (--max-pods, --node-labels, --register-with-taints, --feature-gates, the
// eviction and reservation maps, --cpu-manager-policy; the configuration fields they
// set are left in UserArgs.Config for CheckConfig). A flag that kubelet removed but
// whose job is done another way (dropped.go) is left out with a warning; any other
// flag or value that kubelet would refuse is a problem, one line each, naming where
// it came from (name of the argument's first word: "--kubelet-extra-args",
// "spec.kubelet.flags[2]"), the argument, the kubelet's version and what is
// allowed. For a kubelet newer than the table, a flag the newest known minor lacks
// is a warning, not a problem; for one older than the table, flags are not judged.
// Nothing the kubelet would accept is a problem. It is pure.
func CheckArgs(v Version, words []string, name func(first int) string) (UserArgs, []string) {
	j := argJudge{v: v, words: words, name: name, out: UserArgs{Config: map[string]any{}, From: map[string]string{}}}
	minors := kubeletflags.Minors()
	first, last := minors[0], minors[len(minors)-1]
	switch {
	case v.Major == 1 && kubeletflags.Known(v.Minor):
		j.table = v.Minor
	case v.Major > 1 || v.Major == 1 && v.Minor > last:
		j.table, j.newer = last, true
	default:
		j.table, j.older = first, true
	}
	args := ParseArgs(words, KindIn(j.table))
	for _, a := range args {
		if j.judge(a) {
			j.out.Words = append(j.out.Words, words[a.First:a.First+a.N]...)
		} else {
			j.out.Dropped = true
		}
	}
	return j.out, j.problems
}

// argJudge holds CheckArgs' state.
type argJudge struct {
	v            Version
	words        []string
	name         func(int) string
	table        int  // the kubeletflags minor judged against
	newer, older bool // v is newer or older than the table
	out          UserArgs
	problems     []string
}

// bad adds a problem with a.
func (j *argJudge) bad(a Arg, format string, args ...any) {
	j.problems = append(j.problems, fmt.Sprintf("%s: %s: ", j.name(a.First), quote.Value(a.Text(j.words)))+fmt.Sprintf(format, args...))
}

// warn adds a warning about a.
func (j *argJudge) warn(a Arg, format string, args ...any) {
	j.out.Warnings = append(j.out.Warnings, fmt.Sprintf("%s: %s: ", j.name(a.First), quote.Value(a.Text(j.words)))+fmt.Sprintf(format, args...))
}

// judge judges one argument; false: drop it.
func (j *argJudge) judge(a Arg) bool {
	kubelet := "kubelet " + j.v.minorString()
	switch {
	case a.Name == "" && a.AfterTerminator:
		j.bad(a, "%s takes no arguments after \"--\" (it exits with \"unknown command\")", kubelet)
		return true
	case a.Name == "":
		j.bad(a, "not a flag: %s exits with \"unknown command\" on a word that is not one (give values as --flag=value, and quote a value with spaces in it)", kubelet)
		return true
	case a.Bad != "":
		j.bad(a, "%s refuses it: %s", kubelet, a.Bad)
		return true
	case a.Short:
		return j.short(a, kubelet)
	case a.Name == "help":
		j.bad(a, "%s prints its help and exits instead of running", kubelet)
		return true
	case a.Name == "version" && (!a.HasValue || a.Value != "false"):
		j.bad(a, "%s prints its version and exits instead of running", kubelet)
		return true
	}
	has := j.older || kubeletflags.Has(j.table, a.Name)
	if d := dropped(a.Name, a.Value); d != nil && (!has || d.since > 0 && j.v.AtLeast(1, d.since)) {
		j.warn(a, "left out for %s: %s", kubelet, d.why)
		return false
	}
	if !has {
		j.unknown(a, kubelet)
		return true
	}
	if !j.older && kubeletflags.Deprecated(j.table, a.Name) {
		j.warn(a, "--%s is deprecated in kubelet %s: it still works, and a later kubelet will not know it", a.Name, minorString(j.table))
	}
	isBool := kubeletflags.IsBool(j.table, a.Name)
	switch {
	case isBool && a.HasValue:
		if _, err := strconv.ParseBool(a.Value); err != nil {
			j.bad(a, "%s refuses it: --%s is true or false", kubelet, a.Name)
		}
		return true
	case isBool:
		return true
	case !a.HasValue:
		j.bad(a, "%s refuses it: --%s needs a value", kubelet, a.Name)
		return true
	}
	j.value(a, kubelet)
	return true
}

// short judges a one-dash flag: the kubelet has -v (verbosity) and -h (help).
func (j *argJudge) short(a Arg, kubelet string) bool {
	switch {
	case a.Bad != "":
		j.bad(a, "%s refuses it: %s", kubelet, a.Bad)
	case a.Name == "h":
		j.bad(a, "%s prints its help and exits instead of running", kubelet)
	case a.Name == "v" && !a.HasValue:
		j.bad(a, "%s refuses it: -v needs a value", kubelet)
	case a.Name == "v":
		if _, err := strconv.ParseUint(a.Value, 10, 32); err != nil {
			j.bad(a, "%s refuses it: -v takes a log level, a whole number from 0", kubelet)
		}
	case j.newer:
		j.warn(a, "-%s is not a short flag of kubelet %s, the newest eksboot knows; %s may refuse it", a.Name, minorString(j.table), kubelet)
	default:
		j.bad(a, "%s has no short flag -%s (its short flags are -v and -h; long flags take two dashes)", kubelet, a.Name)
	}
	return true
}

// unknown judges a flag the table's minor lacks.
func (j *argJudge) unknown(a Arg, kubelet string) {
	if j.newer {
		j.warn(a, "--%s is not a flag of kubelet %s (%s), the newest eksboot knows; %s may refuse it", a.Name, minorString(j.table), kubeletflags.Version(j.table), kubelet)
		return
	}
	if since, ok := kubeletflags.Removed(j.table, a.Name); ok {
		hint := removedHints[a.Name]
		if hint == "" {
			hint = "remove it"
		}
		j.bad(a, "%s has no flag --%s (removed in %s): %s", kubelet, a.Name, minorString(since), hint)
		return
	}
	if near := nearestFlag(j.table, a.Name); near != "" {
		j.bad(a, "%s has no flag --%s (did you mean --%s?)", kubelet, a.Name, near)
		return
	}
	j.bad(a, "%s has no flag --%s", kubelet, a.Name)
}

// value checks the values the kubelet checks before it starts, and records the
// configuration fields they set.
func (j *argJudge) value(a Arg, kubelet string) {
	refuse := func(format string, args ...any) {
		j.bad(a, "%s refuses it: "+format, append([]any{kubelet}, args...)...)
	}
	set := func(field string, v any) {
		j.out.Config[field] = v
		j.out.From[field] = fmt.Sprintf("%s %s", j.name(a.First), quote.Value(a.Text(j.words)))
	}
	switch a.Name {
	case "max-pods":
		n, err := strconv.ParseInt(a.Value, 0, 32)
		if err != nil {
			refuse("--max-pods takes a whole number (a 32-bit integer)")
			return
		}
		set("maxPods", float64(n))
	case "node-labels":
		for _, p := range parseNodeLabels(a.Value, map[string]string{}) {
			refuse("%s", p)
		}
	case "register-with-taints":
		taints, problems := parseTaints(a.Value)
		for _, p := range problems {
			refuse("%s", p)
		}
		if len(problems) == 0 {
			list := make([]any, 0, len(taints))
			for _, t := range taints {
				list = append(list, map[string]any{"key": t.Key, "value": t.Value, "effect": t.Effect})
			}
			set("registerWithTaints", list)
		}
	case "feature-gates":
		gates, _ := j.out.Config["featureGates"].(map[string]any)
		gates = maps.Clone(gates)
		if gates == nil {
			gates = map[string]any{}
		}
		for _, s := range strings.Split(a.Value, ",") {
			if s == "" {
				continue
			}
			k, v, ok := strings.Cut(s, "=")
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if !ok || err != nil {
				refuse("--feature-gates takes name=true or name=false pairs, separated by commas")
				return
			}
			gates[strings.TrimSpace(k)] = b
		}
		set("featureGates", gates)
	case "eviction-hard", "eviction-soft", "eviction-soft-grace-period", "eviction-minimum-reclaim", "kube-reserved", "system-reserved":
		sep := "="
		if a.Name == "eviction-hard" || a.Name == "eviction-soft" {
			sep = "<"
		}
		m := map[string]any{}
		for _, s := range strings.Split(a.Value, ",") {
			if s == "" {
				continue
			}
			k, v, ok := strings.Cut(s, sep)
			if !ok {
				refuse("--%s takes name%svalue pairs, separated by commas", a.Name, sep)
				return
			}
			m[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
		set(configFieldOfFlag[a.Name], m)
	case "cpu-manager-policy":
		set("cpuManagerPolicy", a.Value)
	}
}

// configFieldOfFlag names the KubeletConfiguration field of the map flags value
// records.
var configFieldOfFlag = map[string]string{
	"eviction-hard": "evictionHard", "eviction-soft": "evictionSoft",
	"eviction-soft-grace-period": "evictionSoftGracePeriod", "eviction-minimum-reclaim": "evictionMinimumReclaim",
	"kube-reserved": "kubeReserved", "system-reserved": "systemReserved",
}

// nearestFlag is the flag of kubelet 1.<minor> closest to name, by edit distance,
// when it is close (at most 2 edits, and fewer than half of name), or "".
func nearestFlag(minor int, name string) string {
	best, bestD := "", 3
	for _, f := range kubeletflags.Flags(minor) {
		if d := editDistance(name, f, bestD); d < bestD && 2*d < len(name) {
			best, bestD = f, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at least
// limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range prev {
		prev[i] = i
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		low := cur[0]
		for k := 1; k <= len(b); k++ {
			cost := 1
			if a[i-1] == b[k-1] {
				cost = 0
			}
			cur[k] = min(prev[k]+1, cur[k-1]+1, prev[k-1]+cost)
			low = min(low, cur[k])
		}
		if low >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// minorString is "1.<minor>".
func minorString(minor int) string { return "1." + strconv.Itoa(minor) }

// minorString is the version as "1.35" (a kubelet minor).
func (v Version) minorString() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	slices.Sort(keys)
	return keys
}
