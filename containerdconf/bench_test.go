package containerdconf

import (
	"testing"

	"github.com/eksboot/eksboot/assets"
)

// BenchmarkRender measures containerd's config.toml once per node, as the
// bootstrap renders it. `make bench` runs it with -benchmem.
func BenchmarkRender(b *testing.B) {
	b.Run("containerd", func(b *testing.B) {
		for b.Loop() {
			_ = ContainerdConfig(assets.ContainerdConfig, "602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5")
		}
	})
}
