package assets

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// TestUnitsVerify runs systemd-analyze verify on the eksboot units. verify also
// checks that ExecStart's binary exists, so /usr/bin/eksboot is replaced with
// /bin/true in the copies; everything else is verified as shipped. Warnings (unknown
// keys, bad values) fail the test too: systemd only ignores them.
func TestUnitsVerify(t *testing.T) {
	testtools.Require(t, "systemd-analyze")
	dir := t.TempDir()
	units := map[string][]byte{"eksboot-config.service": EksbootConfigService, "eksboot-run.service": EksbootRunService}
	var paths []string
	for name, b := range units {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte("/usr/bin/eksboot "), []byte("/bin/true ")), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	out, err := exec.Command("systemd-analyze", append([]string{"verify"}, paths...)...).CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
}

// TestUnitsOrdering checks the two-phase contract the units' comments explain.
func TestUnitsOrdering(t *testing.T) {
	for _, tc := range []struct {
		unit string
		b    []byte
		want []string
	}{
		{"eksboot-config.service", EksbootConfigService, []string{"Type=oneshot", "Before=cloud-init.service", "Before=containerd.service kubelet.service", "After=systemd-networkd-wait-online.service networking.service", "DefaultDependencies=no", "ExecStart=/usr/bin/eksboot init --phase config"}},
		{"eksboot-run.service", EksbootRunService, []string{"Type=oneshot", "Requires=eksboot-config.service", "After=eksboot-config.service cloud-final.service", "DefaultDependencies=no", "ExecStart=/usr/bin/eksboot init --phase run"}},
	} {
		for _, w := range tc.want {
			if !strings.Contains(string(tc.b), "\n"+w+"\n") {
				t.Errorf("%s: no line %q", tc.unit, w)
			}
		}
	}
}
