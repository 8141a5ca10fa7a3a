package kubeletconf

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
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
// Errors, every one found, each naming its element: a nameserver that is not an IP
// address (IPv4, or IPv6 with an optional %zone; resolved's :port and #name forms
// are not accepted), and a domain that is not a DNS name, optionally with
// resolved's "~" prefix for a routing-only domain ("~." routes every query).
func ResolvedConfig(nameservers, domains []string) ([]byte, error) {
	var errs []error
	for i, s := range nameservers {
		if _, err := netip.ParseAddr(s); err != nil {
			errs = append(errs, fmt.Errorf("spec.instance.network.nameservers[%d]: %q: want an IPv4 or IPv6 address", i, s))
		}
	}
	for i, d := range domains {
		if err := checkSearchDomain(d); err != nil {
			errs = append(errs, fmt.Errorf("spec.instance.network.domains[%d]: %q: %w", i, d, err))
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
			return fmt.Errorf("want a DNS domain name: label %q starts or ends with '-'", label)
		}
		for _, c := range label {
			if !isASCIILetter(c) && !isASCIIDigit(c) && c != '-' && c != '_' {
				return fmt.Errorf("want a DNS domain name: letters, digits, '-' and '_' only, found %q", c)
			}
		}
	}
	return nil
}
