package nodesys

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/internal/quote"
)

// ResolvedDropInPath is the node path of the systemd-resolved drop-in for
// spec.instance.network, nodeadm's. It is under /run, so it lasts until the next
// boot, when the config phase writes it again.
const ResolvedDropInPath = "/run/systemd/resolved.conf.d/40-eks.conf"

// ResolvedConfig renders spec.instance.network as nodeadm's systemd-resolved
// drop-in:
//
//	[Resolve]
//	DNS=<nameservers, space separated>
//	Domains=<domains, space separated>
//
// in the order given, each line only when its list is not empty. With both lists
// empty it returns nil: no file (a stale one is to be removed). The bytes equal
// nodeadm's when both lists are given (nodeadm's template leaves an empty line for
// a missing one; this leaves the line out).
//
// Errors, every one found, each naming its element: a nameserver that is not a
// plain IP address (IPv4, or IPv6 with an optional %zone that is an interface name
// or index, [A-Za-z0-9_.-], at most 15 bytes: resolved's :port and #name forms are
// not accepted, and Go's parser alone takes any text after '%', a line break
// included); a domain that is not a DNS name, optionally with resolved's "~" prefix
// for a routing-only domain ("~." routes every query); and more than
// MaxResolvedEntries of either, which systemd-resolved would drop with a warning.
func ResolvedConfig(nameservers, domains []string) ([]byte, error) {
	var errs []error
	if len(nameservers) > MaxResolvedEntries {
		errs = append(errs, fmt.Errorf("spec.instance.network.nameservers: %d addresses, more than the %d systemd-resolved takes", len(nameservers), MaxResolvedEntries))
		nameservers = nameservers[:MaxResolvedEntries]
	}
	if len(domains) > MaxResolvedEntries {
		errs = append(errs, fmt.Errorf("spec.instance.network.domains: %d domains, more than the %d systemd-resolved takes", len(domains), MaxResolvedEntries))
		domains = domains[:MaxResolvedEntries]
	}
	for i, s := range nameservers {
		if err := checkNameserver(s); err != nil {
			errs = append(errs, fmt.Errorf("spec.instance.network.nameservers[%d]: %s: %w", i, quote.Value(s), err))
		}
	}
	for i, d := range domains {
		if err := checkSearchDomain(d); err != nil {
			errs = append(errs, fmt.Errorf("spec.instance.network.domains[%d]: %s: %w", i, quote.Value(d), err))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var opts []*unit.UnitOption
	if len(nameservers) > 0 {
		opts = append(opts, unit.NewUnitOption("Resolve", "DNS", strings.Join(nameservers, " ")))
	}
	if len(domains) > 0 {
		opts = append(opts, unit.NewUnitOption("Resolve", "Domains", strings.Join(domains, " ")))
	}
	if len(opts) == 0 {
		return nil, nil
	}
	return io.ReadAll(unit.Serialize(opts))
}

// MaxResolvedEntries is how many DNS servers, and how many search domains,
// systemd-resolved keeps from its configuration (MANAGER_DNS_SERVERS_MAX and
// MANAGER_SEARCH_DOMAINS_MAX, 256 in every version; it ignores the rest with a
// warning).
const MaxResolvedEntries = 256

// maxIfName is the longest interface name Linux has (IFNAMSIZ less its NUL).
const maxIfName = 15

// checkNameserver checks s as a DNS= entry eksboot writes: an IP address, IPv6 with
// an optional zone that is an interface name or index.
func checkNameserver(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return errors.New("want an IPv4 or IPv6 address")
	}
	zone := a.Zone()
	if zone == "" {
		if strings.Contains(s, "%") {
			return errors.New("want an interface name after '%'")
		}
		return nil
	}
	if len(zone) > maxIfName || zone == "." || zone == ".." {
		return fmt.Errorf("zone %s: want an interface name or index, at most %d letters, digits, '_', '.' or '-'", quote.Value(zone), maxIfName)
	}
	for _, c := range []byte(zone) {
		if !isASCIILetter(rune(c)) && !isASCIIDigit(rune(c)) && c != '_' && c != '.' && c != '-' {
			return fmt.Errorf("zone %s: want an interface name or index, at most %d letters, digits, '_', '.' or '-'", quote.Value(zone), maxIfName)
		}
	}
	return nil
}

// checkSearchDomain checks d as a Domains= entry: an optional "~", then a DNS name
// of labels of 1-63 letters, digits, '-' or '_' (not starting or ending with '-'),
// at most 253 characters, with an optional trailing dot; or "~." alone.
func checkSearchDomain(d string) error {
	name := strings.TrimPrefix(d, "~")
	if name == "." && name != d {
		return nil
	}
	name = strings.TrimSuffix(name, ".")
	if name == "" {
		return fmt.Errorf("want a DNS domain name")
	}
	if len(name) > 253 {
		return fmt.Errorf("longer than 253 characters")
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 {
			return fmt.Errorf("want a DNS domain name: labels of 1 to 63 characters separated by dots")
		}
		if label[0] == '-' || label[len(label)-1] == '-' {
			return fmt.Errorf("want a DNS domain name: label %s starts or ends with '-'", quote.Value(label))
		}
		for _, c := range label {
			if !isASCIILetter(c) && !isASCIIDigit(c) && c != '-' && c != '_' {
				return fmt.Errorf("want a DNS domain name: letters, digits, '-' and '_' only, found %U", c)
			}
		}
	}
	return nil
}

func isASCIILetter(r rune) bool { return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') }

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }
