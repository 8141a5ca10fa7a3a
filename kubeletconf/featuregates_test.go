package kubeletconf

import (
	"testing"
)

func TestKnownFeatureGate(t *testing.T) {
	for name, want := range map[string]bool{
		"InstanceIdNodeName": true, "FastImagePull": true, "OSManagedNoManageENIs": true,
		"instanceIdNodeName": false, "FastContainerImagePull": false, "": false,
	} {
		if got := KnownFeatureGate(name); got != want {
			t.Errorf("KnownFeatureGate(%q) = %v, want %v", name, got, want)
		}
	}
	for _, g := range FeatureGates {
		if g.Default || g.Doc == "" || g.Since == "" {
			t.Errorf("%+v: every gate nodeadm knows is off by default and documented", g)
		}
	}
}

func TestFastImagePullEffective(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		on        bool
		milli     int64
		mem       int64
		effective bool
	}{
		// nodeadm internal/containerd/containerd_config_test.go cases (81fec2e8:
		// ../shared/peer/nodeadm-unit/containerd-*).
		{true, 4000, 8 * gib, true},
		{true, 8000, 16 * gib, true},
		{false, 8000, 16 * gib, false},
		{true, 4000, 7 * gib, true},
		{true, 3999, 16 * gib, false},
		{true, 8000, 7*gib - 1, false},
	} {
		if got := FastImagePullEffective(c.on, c.milli, c.mem); got != c.effective {
			t.Errorf("%v %d m %d B: got %v, want %v", c.on, c.milli, c.mem, got, c.effective)
		}
	}
}
