// Package nodeconfig is the NodeConfig API (node.eks.aws/v1alpha1) of AL2023's
// user data, as nodeadm defines it: the types, their strict decoding (an unknown
// field, a duplicate key or a value of the wrong kind is an error naming its
// spec.* path, every error at once; spec.kubelet.config checked against the
// kubelet's own KubeletConfiguration fields, here and only here: the decoding makes
// it a kubeletconf.CheckedOverlay, which what follows takes as checked), and
// nodeadm's merge of several
// documents (later scalars win, maps merge, kubelet flags append). It turns no
// NodeConfig into files: bootstrap.FromNodeConfig makes the run's typed Config of
// a merged NodeConfig.
//
// It is pure (no disk, no network) and reads parts that package userdata split.
package nodeconfig
