package kubeletconf

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/eksboot/eksboot/kubeletconf/kubeletgates"
)

func TestFindVersion(t *testing.T) {
	tests := []struct {
		in   string
		want Version
		err  bool
	}{
		{"Kubernetes v1.32.9-eks-113cf36", Version{1, 32, 9}, false},
		{"1.35.0", Version{1, 35, 0}, false},
		{"v1.37.2\n", Version{1, 37, 2}, false},
		{"containerd github.com/containerd/containerd/v2 2.1.5 fb4c30d4ede3531652d86197bf3fc9515e5276d9", Version{2, 1, 5}, false},
		{"containerd github.com/containerd/containerd 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da", Version{1, 7, 27}, false},
		{"a.1.2.3", Version{1, 2, 3}, false},
		{"1.2", Version{}, true},
		{"", Version{}, true},
		{"v1.x.3", Version{}, true},
	}
	for _, tc := range tests {
		got, err := FindVersion(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("FindVersion(%q) = %v, %v; want %v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestKubeletTableRows(t *testing.T) {
	row := func(minor int) KubeletRow {
		r, warn := Kubelet(Version{1, minor, 0})
		if warn != "" {
			t.Fatalf("1.%d: unexpected warning %q", minor, warn)
		}
		return r
	}
	if minors := kubeletMinors(); minors[0] != FirstKubeletMinor || minors[len(minors)-1] != LastKubeletMinor || len(minors) != LastKubeletMinor-FirstKubeletMinor+1 {
		t.Fatalf("kubeletMinors() = %v", minors)
	}
	for _, tc := range []struct {
		minor                      int
		podInfra, podInfraMatters  bool
		qps, gate, alias, shutdown bool
		api                        string
		gates                      []string
	}{
		{24, true, true, true, true, false, false, "kubelet.config.k8s.io/v1alpha1", nil},
		{25, true, true, true, true, false, false, "kubelet.config.k8s.io/v1alpha1", nil},
		// KubeletCredentialProviders is GA and locked in 1.26 and 1.27: not set.
		{26, true, true, true, false, false, false, "kubelet.config.k8s.io/v1alpha1", nil},
		{27, true, true, false, false, false, false, "kubelet.config.k8s.io/v1", nil},
		{28, true, true, false, false, false, false, "kubelet.config.k8s.io/v1", nil},
		{29, true, false, false, false, false, false, "kubelet.config.k8s.io/v1", nil},
		{32, true, false, false, false, true, false, "kubelet.config.k8s.io/v1", nil},
		{33, true, false, false, false, true, false, "kubelet.config.k8s.io/v1", []string{"DynamicResourceAllocation"}},
		{34, true, false, false, false, true, true, "kubelet.config.k8s.io/v1", []string{"DynamicResourceAllocation", "MutableCSINodeAllocatableCount"}},
		// DynamicResourceAllocation is locked from 1.35 (and gone in 1.38),
		// MutableCSINodeAllocatableCount from 1.36.
		{35, false, false, false, false, true, true, "kubelet.config.k8s.io/v1", []string{"MutableCSINodeAllocatableCount"}},
		{36, false, false, false, false, true, true, "kubelet.config.k8s.io/v1", nil},
		{37, false, false, false, false, true, true, "kubelet.config.k8s.io/v1", nil},
		{38, false, false, false, false, true, true, "kubelet.config.k8s.io/v1", nil},
	} {
		r := row(tc.minor)
		var gates []string
		for g, on := range r.FeatureGates {
			if on {
				gates = append(gates, g)
			}
		}
		slices.Sort(gates)
		if r.Minor != tc.minor || r.PodInfraContainerImageFlag != tc.podInfra || r.PodInfraContainerImageMatters != tc.podInfraMatters ||
			r.KubeAPIQPS != tc.qps || r.CredentialProvidersGate != tc.gate || r.ECRPublicAlias != tc.alias ||
			r.GracefulShutdown != tc.shutdown || r.CredentialProviderAPI != tc.api || !slices.Equal(gates, tc.gates) {
			t.Errorf("1.%d: got %+v", tc.minor, r)
		}
	}
	// --config-dir from 1.30: 1.28 and 1.29 have the flag but exit without
	// KUBELET_CONFIG_DROPIN_DIR_ALPHA in their environment.
	for m := FirstKubeletMinor; m <= LastKubeletMinor; m++ {
		if got := row(m).ConfigDir; got != (m >= 30) {
			t.Errorf("1.%d: ConfigDir %v", m, got)
		}
	}
}

func TestKubeletOutsideTheTableGetsTheNearestRowAndAWarning(t *testing.T) {
	r, warn := Kubelet(Version{1, 40, 1})
	if r.Minor != LastKubeletMinor || r.PodInfraContainerImageFlag || !strings.Contains(warn, "newer") {
		t.Errorf("1.40: got row 1.%d (pod infra flag %v), warning %q; want the newest row and a warning", r.Minor, r.PodInfraContainerImageFlag, warn)
	}
	r, warn = Kubelet(Version{1, 19, 4})
	if r.KubeAPIQPS || !r.PodInfraContainerImageFlag || !strings.Contains(warn, "older") {
		t.Errorf("1.19: got %+v, warning %q", r, warn)
	}
}

func TestCredentialProviderConfigFor(t *testing.T) {
	for _, tc := range []struct {
		minor          int
		api, pluginAPI string
		alias          bool
	}{
		{26, "kubelet.config.k8s.io/v1alpha1", "credentialprovider.kubelet.k8s.io/v1alpha1", false},
		{31, "kubelet.config.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1", false},
		{35, "kubelet.config.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1", true},
	} {
		r, _ := Kubelet(Version{1, tc.minor, 0})
		var got struct {
			Kind, APIVersion string
			Providers        []struct {
				Name, DefaultCacheDuration, APIVersion string
				MatchImages                            []string
			}
		}
		if err := json.Unmarshal(CredentialProviderConfigFor(r), &got); err != nil {
			t.Fatal(err)
		}
		if got.Kind != "CredentialProviderConfig" || got.APIVersion != tc.api || len(got.Providers) != 1 {
			t.Fatalf("1.%d: %+v", tc.minor, got)
		}
		p := got.Providers[0]
		if p.Name != ECRCredentialProvider || p.APIVersion != tc.pluginAPI || p.DefaultCacheDuration != "12h0m0s" ||
			!slices.Contains(p.MatchImages, "*.dkr.ecr.*.amazonaws.com") || !slices.Contains(p.MatchImages, "public.ecr.aws") ||
			slices.Contains(p.MatchImages, "ecr-public.aws.com") != tc.alias {
			t.Errorf("1.%d: provider %+v", tc.minor, p)
		}
	}
}

func TestKubeconfigAWSCLI(t *testing.T) {
	got := Kubeconfig{Server: "https://h.example", ClusterName: "demo", Region: "us-west-2", Auth: AuthAWSCLI}.Render()
	var k struct {
		Clusters []struct {
			Cluster struct {
				Server string `json:"server"`
				CA     string `json:"certificate-authority"`
			} `json:"cluster"`
		} `json:"clusters"`
		Users []struct {
			User struct {
				Exec struct {
					Command string   `json:"command"`
					Args    []string `json:"args"`
				} `json:"exec"`
			} `json:"user"`
		} `json:"users"`
	}
	if err := yaml.Unmarshal(got, &k); err != nil {
		t.Fatalf("%v\n%s", err, got)
	}
	exec := k.Users[0].User.Exec
	if k.Clusters[0].Cluster.Server != "https://h.example" || k.Clusters[0].Cluster.CA != DefaultCAFile ||
		exec.Command != "aws" || !slices.Equal(exec.Args, []string{"eks", "get-token", "--cluster-name", "demo", "--region", "us-west-2"}) {
		t.Errorf("got %+v\n%s", k, got)
	}
}

// kubeletMinors lists the minors of the table, oldest first.
func kubeletMinors() []int {
	out := make([]int, len(kubelets))
	for i, r := range kubelets {
		out[i] = r.Minor
	}
	return out
}

// TestOwnGatesAreTheKubelets: every gate eksboot sets by itself, for every minor of
// the gate table, is one that minor's kubelet has and has neither locked nor
// deprecated, and a kubelet newer than the table gets no gate the newest minor
// locked or deprecated.
func TestOwnGatesAreTheKubelets(t *testing.T) {
	for _, minor := range kubeletgates.Minors() {
		r, _ := Kubelet(Version{1, minor, 0})
		gates := maps.Clone(r.FeatureGates)
		if r.CredentialProvidersGate {
			gates["KubeletCredentialProviders"] = true
		}
		gates["RotateKubeletServerCertificate"] = true // the template's
		for name := range gates {
			g, ok := kubeletgates.Lookup(minor, name)
			switch {
			case !ok:
				t.Errorf("1.%d: eksboot sets %s, which that kubelet does not have", minor, name)
			case g.Locked || g.Stage == kubeletgates.Deprecated:
				t.Errorf("1.%d: eksboot sets %s, which that kubelet has %s (locked %v)", minor, name, g.Stage, g.Locked)
			}
		}
	}
	minors := kubeletgates.Minors()
	last := minors[len(minors)-1]
	r, warn := Kubelet(Version{1, last + 1, 0})
	for name := range r.FeatureGates {
		if g, _ := kubeletgates.Lookup(last, name); g.Locked || g.Stage == kubeletgates.Deprecated {
			t.Errorf("1.%d: eksboot sets %s, which 1.%d has %s (locked %v)", last+1, name, last, g.Stage, g.Locked)
		}
	}
	if warn == "" {
		t.Errorf("1.%d: no warning for a kubelet newer than the table", last+1)
	}
}
