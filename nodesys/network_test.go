package nodesys

import (
	"fmt"
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

// TestResolvedConfigRefusesExtraLines: Go's address parser takes any text after an
// IPv6 address's '%', so a zone could carry a line break (and with it lines of
// resolved's own, DNSSEC=no) or a second server in the #name form.
func TestResolvedConfigRefusesExtraLines(t *testing.T) {
	for _, ns := range []string{
		"fe80::1%eth0\nDNSSEC=no\nDNSOverTLS=yes",
		"fe80::1%eth0 8.8.8.8#dns.google",
		"fe80::1%eth0#dns.google",
		"fe80::1%eth0\x00",
		"fe80::1%" + strings.Repeat("e", 16),
		"fe80::1%..",
		"fe80::1%",
		"8.8.8.8#dns.google",
		"[fe80::1]:53",
	} {
		got, err := ResolvedConfig([]string{ns}, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "spec.instance.network.nameservers[0]: ") {
			t.Errorf("%q: got %q, %v; want an error naming spec.instance.network.nameservers[0]", ns, got, err)
		}
	}
	for _, ns := range []string{"fe80::1%eth0", "fe80::1%2", "fe80::1%enp0s3.100", "fe80::1%br_0-x"} {
		if _, err := ResolvedConfig([]string{ns}, nil); err != nil {
			t.Errorf("%q: %v", ns, err)
		}
	}
}

// TestResolvedConfigBoundsItsLists: systemd-resolved keeps 256 servers and 256
// domains and drops the rest; more is an error, not a node that differs from its
// configuration.
func TestResolvedConfigBoundsItsLists(t *testing.T) {
	ns := make([]string, MaxResolvedEntries+1)
	domains := make([]string, MaxResolvedEntries+1)
	for i := range ns {
		ns[i] = fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		domains[i] = fmt.Sprintf("d%d.example", i)
	}
	if _, err := ResolvedConfig(ns[:MaxResolvedEntries], domains[:MaxResolvedEntries]); err != nil {
		t.Fatalf("256 of each: %v", err)
	}
	_, err := ResolvedConfig(ns, domains)
	for _, want := range []string{
		"spec.instance.network.nameservers: 257 addresses, more than the 256 systemd-resolved takes",
		"spec.instance.network.domains: 257 domains, more than the 256 systemd-resolved takes",
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v; want %q", err, want)
		}
	}
}
