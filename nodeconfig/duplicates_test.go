package nodeconfig

import "testing"

// TestDuplicateKeysAreErrors: a key given twice in one mapping, at any depth, is an
// error naming its path, where the decoder would keep the last value (a node could
// join the wrong cluster). The same key in different mappings, or in different
// documents or parts, is not a duplicate.
func TestDuplicateKeysAreErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{
			"cluster name twice", ncHead + "spec:\n  cluster:\n    name: good\n    name: evil\n",
			"part 1 (application/node.eks.aws): spec.cluster.name: duplicate key",
		},
		{
			"kubelet twice", ncHead + "spec:\n  kubelet:\n    flags: [--v=2]\n  cluster: {name: c}\n  kubelet:\n    config: {maxPods: 3}\n",
			"part 1 (application/node.eks.aws): spec.kubelet: duplicate key",
		},
		{
			"quoted and plain", ncHead + "spec:\n  cluster:\n    name: a\n    \"name\": b\n",
			"part 1 (application/node.eks.aws): spec.cluster.name: duplicate key",
		},
		{
			"in a flow mapping", ncHead + "spec: {cluster: {name: a, cidr: 10.100.0.0/16, name: b}}\n",
			"part 1 (application/node.eks.aws): spec.cluster.name: duplicate key",
		},
		{
			"JSON", `{"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "kind": "NodeConfig", "spec": {}}`,
			"part 1 (application/node.eks.aws): kind: duplicate key",
		},
		{
			"in the kubelet config", ncHead + "spec:\n  kubelet:\n    config:\n      maxPods: 3\n      evictionHard: {memory.available: 5%}\n      maxPods: 300\n",
			"part 1 (application/node.eks.aws): spec.kubelet.config.maxPods: duplicate key",
		},
		{
			"in a nested map", ncHead + "spec:\n  instance:\n    environment:\n      kubelet: {A: x, A: y}\n",
			"part 1 (application/node.eks.aws): spec.instance.environment.kubelet.A: duplicate key",
		},
		{
			"one number written twice", ncHead + "spec:\n  featureGates:\n    16: true\n    0x10: false\n",
			"part 1 (application/node.eks.aws): spec.featureGates.0x10: duplicate key",
		},
		{
			"a number and its text", ncHead + "spec:\n  instance:\n    environment:\n      kubelet: {16: x, '16': y}\n",
			"part 1 (application/node.eks.aws): spec.instance.environment.kubelet.16: duplicate key",
		},
		{
			"two at once, second document", ncHead + "---\n" + ncHead + "spec:\n  cluster: {name: a, name: b}\n  cluster: {}\n",
			"part 1 (application/node.eks.aws) document 2: spec.cluster.name: duplicate key; part 1 (application/node.eks.aws) document 2: spec.cluster: duplicate key",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeNodeConfigs([]byte(tc.in), "part 1 (application/node.eks.aws)")
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
	ok := ncHead + "spec:\n  cluster: {name: a}\n  kubelet:\n    config: {maxPods: 3}\n  maxPods: {mode: eni-max-pods}\n---\n" + ncHead + "spec:\n  cluster: {name: b}\n"
	if _, err := DecodeNodeConfigs([]byte(ok), "p"); err != nil {
		t.Errorf("the same key in different mappings and documents: %v", err)
	}
}
