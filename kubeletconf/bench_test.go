package kubeletconf

import (
	"testing"
)

// benchInput is an m5.large node's kubelet-config.json input, as the bootstrap
// computes it.
var benchInput = Input{
	ClusterDNS:      []string{"10.100.0.10"},
	MaxPods:         29,
	SetMaxPods:      true,
	CPUs:            2,
	ProviderID:      "aws:///us-west-2a/i-0123456789abcdef0",
	KubeletVersion:  Version{1, 32, 9},
	ReservedCgroups: true,
}

// BenchmarkRender measures each renderer once per node, as the bootstrap calls them:
// kubelet-config.json (Build from the embedded template, then Marshal), the
// kubeconfig and the two kubelet drop-ins (containerd's config.toml is
// containerdconf's BenchmarkRender). `make bench` runs it with -benchmem.
func BenchmarkRender(b *testing.B) {
	b.Run("kubelet-config", func(b *testing.B) {
		for b.Loop() {
			cfg, err := Build(benchInput)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := Marshal(cfg); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("kubeconfig", func(b *testing.B) {
		k := Kubeconfig{Server: "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com", ClusterName: "demo", Region: "us-west-2"}
		for b.Loop() {
			_ = k.Render()
		}
	})
	b.Run("drop-ins", func(b *testing.B) {
		args := "--node-ip=192.168.45.67 --pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5 --v=2 --hostname-override=ip-192-168-45-67.us-west-2.compute.internal --cloud-provider=external"
		extra := "--node-labels=team=a,eks.amazonaws.com/nodegroup=ng-1 --register-with-taints=dedicated=gpu:NoSchedule"
		for b.Loop() {
			if _, err := EnvDropIn(KubeletArgsVar, args); err != nil {
				b.Fatal(err)
			}
			if _, err := EnvDropIn(KubeletExtraArgsVar, extra); err != nil {
				b.Fatal(err)
			}
		}
	})
}
