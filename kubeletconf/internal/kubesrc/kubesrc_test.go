package kubesrc

import (
	"slices"
	"strings"
	"testing"
)

func TestRequirement(t *testing.T) {
	for _, tc := range []struct{ mod, want, wantErr string }{
		{"module k\n\nrequire (\n\tk8s.io/klog/v2 v2.60.1\n)\n", "v2.60.1", ""},
		{"module k\nrequire k8s.io/klog/v2 v2.1.0\nreplace k8s.io/klog/v2 => k8s.io/klog/v2 v2.2.0\n", "v2.2.0", ""},
		{"module k\nrequire k8s.io/klog/v2x v2.1.0\n", "", "no requirement of k8s.io/klog/v2"},
	} {
		got, err := Requirement([]byte(tc.mod), "k8s.io/klog/v2")
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && err.Error() != tc.wantErr) {
			t.Errorf("Requirement(%q) = %q, %v; want %q, %q", tc.mod, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestVersionsAreOnePerMinor(t *testing.T) {
	for i, v := range Versions {
		minor, err := Minor(v)
		if err != nil || minor != 24+i {
			t.Errorf("Versions[%d] = %s (%v), want a v1.%d.x version", i, v, err, 24+i)
		}
		if i < len(Versions)-1 && strings.Contains(v, "-") {
			t.Errorf("Versions[%d] = %s: only the newest minor may be a pre-release", i, v)
		}
	}
}

func TestNewerServed(t *testing.T) {
	pinned := []string{"v1.33.13", "v1.34.4", "v1.38.0-beta.0"}
	for _, tc := range []struct {
		listed []string
		newer  string // "" when none is
	}{
		{[]string{"v1.13.0", "v1.33.6", "v1.34.4", "v1.35.0", "v1.34.5-rc.0", "v1.38.0-alpha.3", "v1.38.0-beta.0"}, ""},
		{[]string{"v1.33.14", "v1.34.4"}, "v1.33.14"},
		{[]string{"v1.38.0-beta.1", "v1.38.0-alpha.9"}, "v1.38.0-beta.1"},
		{[]string{"v1.38.0-rc.0"}, "v1.38.0-rc.0"},
		{[]string{"v1.38.0"}, "v1.38.0"},
		{[]string{"v1.38.0-beta.0.1"}, "v1.38.0-beta.0.1"},
	} {
		err := NewerServed(pinned, tc.listed)
		switch {
		case tc.newer == "" && err != nil:
			t.Errorf("NewerServed(%v) = %v, want nil", tc.listed, err)
		case tc.newer != "" && (err == nil || !strings.Contains(err.Error(), "newer versions than Versions pins: "+tc.newer+";")):
			t.Errorf("NewerServed(%v) = %v, want one naming %s", tc.listed, err, tc.newer)
		}
	}
}

func TestStaging(t *testing.T) {
	if got := Staging("v1.38.0-beta.0"); got != "v0.38.0-beta.0" {
		t.Errorf("Staging = %q", got)
	}
	mod := "module k8s.io/kubernetes\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/component-base => ./staging/src/k8s.io/component-base\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n"
	if got, want := StagingModules([]byte(mod)), []string{"k8s.io/api", "k8s.io/component-base"}; !slices.Equal(got, want) {
		t.Errorf("StagingModules = %v, want %v", got, want)
	}
}
