package kubeletconf

import (
	"sort"
	"strings"

	"github.com/eksboot/eksboot/unitenv"
)

// JoinArgs joins a NodeConfig's spec.kubelet.flags into the value of the
// KUBELET_EXTRA_ARGS drop-in as nodeadm joins them into NODEADM_KUBELET_ARGS: with
// spaces, as they are, so that systemd's split of $KUBELET_EXTRA_ARGS
// (unitenv.SplitWords) removes their quotes and backslashes as it does on nodeadm's
// nodes (Karpenter writes --node-labels="k=v,..."), except that a flag with
// whitespace in it and no quote or backslash is double-quoted whole, so it reaches
// the kubelet as one argument (on nodeadm's nodes it would be split).
func JoinArgs(flags []string) string {
	out := make([]string, 0, len(flags))
	for _, f := range flags {
		if strings.ContainsAny(f, " \t\r\n") && !strings.ContainsAny(f, `"\`) {
			f = `"` + f + `"`
		}
		out = append(out, f)
	}
	return strings.Join(out, " ")
}

// FlagWords returns the arguments the kubelet receives for spec.kubelet.flags
// (systemd's split of JoinArgs(flags)) and, for each, the index of the flag it
// starts in.
func FlagWords(flags []string) (words []string, from []int) {
	ends := make([]int, len(flags)) // where each flag's text ends in the joined value
	at := 0
	for i, f := range flags {
		at += len(JoinArgs([]string{f}))
		ends[i] = at
		at++ // the space between flags
	}
	words, starts := unitenv.SplitWordsAt(JoinArgs(flags))
	from = make([]int, len(words))
	for i, s := range starts {
		from[i] = sort.SearchInts(ends, s+1)
	}
	return words, from
}
