package bootstrap

import (
	"strings"
	"testing"
)

func TestDetectProfile(t *testing.T) {
	tests := []struct {
		name, osRelease string
		none            bool
		want            string
	}{
		{"bare root", "", true, ProfileAL2},
		{"Amazon Linux 2", "NAME=\"Amazon Linux\"\nVERSION=\"2\"\nID=\"amzn\"\nVERSION_ID=\"2\"\n", false, ProfileAL2},
		{"Amazon Linux 2023", "NAME=\"Amazon Linux\"\nID=\"amzn\"\nVERSION_ID=\"2023\"\n", false, ProfileAL2023},
		{"unquoted", "ID=amzn\nVERSION_ID=2023\n", false, ProfileAL2023},
		{"Debian: no EKS marker", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\nVERSION_ID=\"12\"\n", false, ProfileAL2023},
		{"Ubuntu", "ID=ubuntu\nVERSION_ID=\"24.04\"\n", false, ProfileAL2023},
		{"empty os-release", "", false, ProfileAL2023},
	}
	for _, tc := range tests {
		var b []byte
		if !tc.none {
			b = []byte(tc.osRelease)
		}
		got := detectProfile(b)
		if got.Name != tc.want || got.Reason == "" {
			t.Errorf("%s: got %q (%s), want %q", tc.name, got.Name, got.Reason, tc.want)
		}
		if got.ContainerdMajor != profiles[tc.want].ContainerdMajor || got.KubeconfigAuth != profiles[tc.want].KubeconfigAuth {
			t.Errorf("%s: the profile's defaults are not %s's: %+v", tc.name, tc.want, got)
		}
	}
}

func TestImageProfileFlag(t *testing.T) {
	o, err := parseArgs([]string{"c", "--image-profile", "al2024"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	_, err = Validate(o)
	want := `--image-profile "al2024": want al2 or al2023 (or leave it out to detect the image)`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("error %v, want it to say %s", err, want)
	}
}

// TestBPFMountUnitOnlyWhereSystemdNeedsIt: sys-fs-bpf.mount is for AL2's systemd;
// today's systemd mounts bpffs itself and refuses the unit.
func TestBPFMountUnitOnlyWhereSystemdNeedsIt(t *testing.T) {
	for _, tc := range []struct {
		profile        string
		mount, mounted bool
		want           bool
	}{
		{ProfileAL2, true, false, true},
		{ProfileAL2, true, true, false},
		{ProfileAL2, false, false, false},
		{ProfileAL2023, true, false, false},
		{ProfileAL2023, true, true, false},
	} {
		p, _ := lookupProfile(tc.profile, "")
		if got := p.WantsBPFMountUnit(tc.mount, tc.mounted); got != tc.want {
			t.Errorf("%s: WantsBPFMountUnit(mount %v, mounted %v) = %v, want %v", tc.profile, tc.mount, tc.mounted, got, tc.want)
		}
	}
}
