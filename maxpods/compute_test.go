package maxpods

import (
	"reflect"
	"testing"
)

func TestCompute(t *testing.T) {
	m5large := TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}
	tests := []struct {
		name      string
		in        TypeInfo
		o         Options
		want      int
		wantSteps []string
		wantErr   string
	}{
		{"classic under the cap", m5large, Options{}, 29, []string{"cap 110 (2 vCPUs <= 30): not reached"}, ""},
		{"30 vCPUs: 110", TypeInfo{Hypervisor: "nitro", VCPUs: 30, ENIs: 8, IPv4PerENI: 30}, Options{}, 110, []string{"cap 110 (30 vCPUs <= 30): gives 110"}, ""},
		{"31 vCPUs: 250", TypeInfo{Hypervisor: "nitro", VCPUs: 31, ENIs: 8, IPv4PerENI: 30}, Options{}, 234, []string{"cap 250 (31 vCPUs > 30): not reached"}, ""},
		{"prefix delegation", m5large, Options{PrefixDelegation: true}, 110, []string{"cap 110 (2 vCPUs <= 30): gives 110"}, ""},
		{"prefix delegation uncapped", m5large, Options{PrefixDelegation: true, Uncapped: true}, 434, []string{"no cap (the maximum was asked for)"}, ""},
		{
			"prefix delegation, CNI 1.8", m5large,
			Options{PrefixDelegation: true, CNIVersion: CNIVersion{1, 8, 9}, Uncapped: true},
			29,
			[]string{"prefix delegation not applied: VPC CNI 1.8.9 is older than 1.9", "no cap (the maximum was asked for)"},
			"",
		},
		{"prefix delegation, CNI 2.0", m5large, Options{PrefixDelegation: true, CNIVersion: CNIVersion{2, 0, 0}, Uncapped: true}, 434, nil, ""},
		{
			"prefix delegation on bare metal: no hypervisor",
			TypeInfo{VCPUs: 96, ENIs: 15, IPv4PerENI: 50, BareMetal: true},
			Options{PrefixDelegation: true, Uncapped: true},
			737,
			[]string{`prefix delegation not applied: hypervisor "" is not nitro`, "no cap (the maximum was asked for)"},
			"",
		},
		{"custom networking", m5large, Options{CustomNetworking: true}, 20, nil, ""},
		{"security groups for pods", m5large, Options{SecurityGroupsForPods: true}, 20, nil, ""},
		{"both: two ENIs fewer", m5large, Options{CustomNetworking: true, SecurityGroupsForPods: true}, 11, nil, ""},
		{
			"max ENI below the limit", m5large,
			Options{MaxENI: 2, Uncapped: true},
			20,
			[]string{"MAX_ENI 2: 2 of the 3 ENIs", "no cap (the maximum was asked for)"},
			"",
		},
		{"max ENI above the limit", m5large, Options{MaxENI: 9, Uncapped: true}, 29, nil, ""},
		{"no ENI left: host-network pods only", TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 1, IPv4PerENI: 4}, Options{CustomNetworking: true, SecurityGroupsForPods: true}, 2, nil, ""},
		{"ipv6: the cap", m5large, Options{IPv6: true}, 110, []string{"cap 110 (2 vCPUs <= 30): gives 110"}, ""},
		{"ipv6, many vCPUs", TypeInfo{Hypervisor: "nitro", VCPUs: 96, ENIs: 15, IPv4PerENI: 50}, Options{IPv6: true}, 250, nil, ""},
		{"ipv6 uncapped", m5large, Options{IPv6: true, Uncapped: true}, 0, nil, "ipv6: pods are not limited by ENIs, so there is no uncapped value"},
		{"ipv6 custom networking", m5large, Options{IPv6: true, CustomNetworking: true}, 0, nil, "ipv6: custom networking is not available on IPv6 clusters"},
		{"vCPUs unknown", TypeInfo{ENIs: 3, IPv4PerENI: 10}, Options{}, 0, nil, "cap: the 110/250 cap depends on the vCPU count, which is not known"},
		{"vCPUs unknown, uncapped", TypeInfo{ENIs: 3, IPv4PerENI: 10}, Options{Uncapped: true}, 29, nil, ""},
		{"negative max ENI", m5large, Options{MaxENI: -1}, 0, nil, "max ENIs -1: want 0 (no limit) or more"},
		{"no ENIs", TypeInfo{VCPUs: 2, IPv4PerENI: 10}, Options{}, 0, nil, "max pods: want positive ENIs and IPv4 addresses per ENI, got 0 and 10"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Compute(tc.in, tc.o)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("Compute error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got.MaxPods != tc.want {
				t.Fatalf("Compute(%+v, %+v) = %d, %v; want %d", tc.in, tc.o, got.MaxPods, err, tc.want)
			}
			if tc.wantSteps != nil && !reflect.DeepEqual(got.Steps, tc.wantSteps) {
				t.Errorf("steps = %q, want %q", got.Steps, tc.wantSteps)
			}
		})
	}
}

func TestComputeFormula(t *testing.T) {
	info, _ := Info("m5.large")
	r, _ := Compute(info, Options{PrefixDelegation: true})
	if want := "3 * ((10 - 1) * 16) + 2 = 434"; r.Formula != want || !r.PrefixDelegation || r.Cap != 110 || r.ENIs != 3 {
		t.Errorf("Compute(m5.large, PD) = %+v; want formula %q, prefix delegation, cap 110, 3 ENIs", r, want)
	}
	r, _ = Compute(info, Options{CustomNetworking: true, Uncapped: true})
	if want := "2 * (10 - 1) + 2 = 20"; r.Formula != want || r.Cap != 0 {
		t.Errorf("Compute(m5.large, custom networking) = %+v; want formula %q, no cap", r, want)
	}
}

func TestParseCNIVersion(t *testing.T) {
	tests := []struct {
		in      string
		want    CNIVersion
		wantErr string
	}{
		{"1.10.0", CNIVersion{1, 10, 0}, ""},
		{"v1.18.3", CNIVersion{1, 18, 3}, ""},
		{"2.0.0", CNIVersion{2, 0, 0}, ""},
		{"", CNIVersion{}, `CNI version "": want x.y.z, such as 1.18.0`},
		{"1.10", CNIVersion{}, `CNI version "1.10": want x.y.z, such as 1.18.0`},
		{"1.10.0.1", CNIVersion{}, `CNI version "1.10.0.1": want x.y.z, such as 1.18.0`},
		{"1.x.0", CNIVersion{}, `CNI version "1.x.0": want x.y.z, such as 1.18.0 ("x" is not a whole number)`},
		{"1..0", CNIVersion{}, `CNI version "1..0": want x.y.z, such as 1.18.0 ("" is not a whole number)`},
		{"1.+2.0", CNIVersion{}, `CNI version "1.+2.0": want x.y.z, such as 1.18.0 ("+2" is not a whole number)`},
		{"1.-2.0", CNIVersion{}, `CNI version "1.-2.0": want x.y.z, such as 1.18.0 ("-2" is not a whole number)`},
		{"1.18.0-eksbuild.1", CNIVersion{}, `CNI version "1.18.0-eksbuild.1": want x.y.z, such as 1.18.0`},
		{"0.0.0", CNIVersion{}, `CNI version "0.0.0": want x.y.z, such as 1.18.0 (0.0.0 is not a version)`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseCNIVersion(tc.in)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("ParseCNIVersion(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || got.String() != tc.want.String() {
				t.Fatalf("ParseCNIVersion(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
		})
	}
}
