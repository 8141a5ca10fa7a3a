package kubeletconf

import (
	"strings"
	"testing"
)

// nodeadm's e2e case network-name-resolution (awslabs/amazon-eks-ami@81fec2e8
// nodeadm/test/e2e/cases/network-name-resolution/config.yaml and
// expected-resolved.conf; ../shared/peer/nodeadm-e2e/).
func TestResolvedConfigMatchesNodeadm(t *testing.T) {
	got, err := ResolvedConfig([]string{"8.8.8.8", "8.8.4.4"}, []string{"search.me.please", "search.me.next.please"})
	if err != nil {
		t.Fatal(err)
	}
	want := "[Resolve]\nDNS=8.8.8.8 8.8.4.4\nDomains=search.me.please search.me.next.please\n"
	if string(got) != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if ResolvedDropInPath != "/run/systemd/resolved.conf.d/40-eks.conf" {
		t.Errorf("path %s", ResolvedDropInPath)
	}
}

func TestResolvedConfigOneList(t *testing.T) {
	for _, c := range []struct {
		ns, domains []string
		want        string
	}{
		{[]string{"fd00::53", "fe80::1%eth0"}, nil, "[Resolve]\nDNS=fd00::53 fe80::1%eth0\n"},
		{nil, []string{"corp.example.com.", "~internal", "~."}, "[Resolve]\nDomains=corp.example.com. ~internal ~.\n"},
	} {
		got, err := ResolvedConfig(c.ns, c.domains)
		if err != nil || string(got) != c.want {
			t.Errorf("%v %v: got %q (%v), want %q", c.ns, c.domains, got, err, c.want)
		}
	}
}

func TestResolvedConfigEmptyIsNoFile(t *testing.T) {
	got, err := ResolvedConfig(nil, []string{})
	if err != nil || got != nil {
		t.Errorf("got %q, %v; want nil, nil", got, err)
	}
}

func TestResolvedConfigErrors(t *testing.T) {
	_, err := ResolvedConfig(
		[]string{"8.8.8.8", "dns.google", "8.8.8.8:53", "1.1.1.1 9.9.9.9", ""},
		[]string{"ok.example", "bad domain", "-x.example", ".", "a..b", "line\nbreak", strings.Repeat("a", 64) + ".com", "%h"},
	)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`spec.instance.network.nameservers[1]: "dns.google": want an IPv4 or IPv6 address`,
		`spec.instance.network.nameservers[2]: "8.8.8.8:53"`,
		`spec.instance.network.nameservers[3]: "1.1.1.1 9.9.9.9"`,
		`spec.instance.network.nameservers[4]: ""`,
		`spec.instance.network.domains[1]: "bad domain"`,
		`spec.instance.network.domains[2]: "-x.example"`,
		`spec.instance.network.domains[3]: "."`,
		`spec.instance.network.domains[4]: "a..b"`,
		`spec.instance.network.domains[5]: "line\nbreak"`,
		`spec.instance.network.domains[6]:`,
		`spec.instance.network.domains[7]: "%h"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	for _, notWant := range []string{"nameservers[0]", "domains[0]"} {
		if strings.Contains(err.Error(), notWant) {
			t.Errorf("error names valid %s: %q", notWant, err)
		}
	}
}
