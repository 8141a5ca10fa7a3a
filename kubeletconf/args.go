package kubeletconf

import (
	"strconv"
	"strings"
)

// JoinArgs joins kubelet arguments, one each (a NodeConfig's spec.kubelet.flags), into
// one value of the KUBELET_EXTRA_ARGS drop-in, which systemd splits at whitespace,
// removing one level of double quotes: an argument with whitespace in it is
// double-quoted whole, so it reaches the kubelet as one argument.
func JoinArgs(args []string) string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if strings.ContainsAny(a, " \t") && !strings.Contains(a, `"`) {
			a = strconv.Quote(a)
		}
		out = append(out, a)
	}
	return strings.Join(out, " ")
}
