package kubeletconf

import "github.com/eksboot/eksboot/unitenv"

// JoinArgs joins kubelet arguments, one each (a NodeConfig's spec.kubelet.flags), into
// one value of the KUBELET_EXTRA_ARGS drop-in, which systemd splits as
// unitenv.SplitWords does: each argument reaches the kubelet as it is, one argument
// (unitenv.JoinWords quotes those that need it).
func JoinArgs(args []string) string { return unitenv.JoinWords(args) }
