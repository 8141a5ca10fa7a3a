package imds

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"unicode"

	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/internal/strictjson"
)

var (
	// instanceTypeRE matches instance types such as "m5.large" or "u-6tb1.metal".
	instanceTypeRE = lazy.Regexp{Expr: `^[a-z0-9][a-z0-9-]*\.[a-z0-9-]+$`}
	// nameRE matches IDs, zones, regions and DNS names: one word, no markup.
	nameRE = lazy.Regexp{Expr: `^[A-Za-z0-9][A-Za-z0-9._-]*$`}
	// instanceIDRE matches instance IDs: the old 8-digit form and the 17-digit one.
	instanceIDRE = lazy.Regexp{Expr: `^i-([0-9a-f]{8}|[0-9a-f]{17})$`}
	// regionRE matches region names such as "us-west-2" or "us-gov-east-1".
	regionRE = lazy.Regexp{Expr: `^[a-z]{2,4}(-[a-z]+)+-[0-9]+$`}
)

// into returns a parse function that checks a single-line answer with check
// and stores it in dst.
func into(dst *string, check func(string) error) func(string) error {
	return func(body string) error {
		v, err := singleLine(body)
		if err != nil {
			return err
		}
		if err := check(v); err != nil {
			return err
		}
		*dst = v
		return nil
	}
}

// intoList returns a parse function that checks every line of a list answer
// with check and stores the lines in dst. Blank lines are skipped.
func intoList(dst *[]string, check func(string) error) func(string) error {
	return func(body string) error {
		text, err := notEmpty(body)
		if err != nil {
			return err
		}
		var list []string
		for i, line := range strings.Split(text, "\n") {
			line = strings.TrimSpace(line)
			if line == "" {
				continue
			}
			if err := check(line); err != nil {
				return fmt.Errorf("line %d: %w", i+1, err)
			}
			list = append(list, line)
		}
		*dst = list
		return nil
	}
}

// notEmpty returns body without surrounding white space, or an error if
// nothing is left or it is an HTML (or XML) page rather than a value.
func notEmpty(body string) (string, error) {
	text := strings.TrimSpace(body)
	switch {
	case text == "":
		return "", errors.New("empty answer")
	case strings.HasPrefix(text, "<"):
		return "", fmt.Errorf("answer is an HTML page, not a value: %s", excerpt(text))
	}
	return text, nil
}

// singleLine is notEmpty for answers that must be one line of printable text.
func singleLine(body string) (string, error) {
	text, err := notEmpty(body)
	if err != nil {
		return "", err
	}
	if n := strings.Count(text, "\n") + 1; n > 1 {
		return "", fmt.Errorf("answer has %d lines, want 1: %s", n, excerpt(text))
	}
	if strings.IndexFunc(text, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "", fmt.Errorf("answer has unprintable characters: %s", excerpt(text))
	}
	return text, nil
}

// excerpt quotes s for an error message as every eksboot error does
// (quote.Value: a short escaped prefix, never a certificate). No value from the
// token endpoint is ever given to it (checkToken).
func excerpt(s string) string { return quote.Value(scrub.Text(s)) }

// Length caps of facts: longer values are no real instance's.
const (
	maxInstanceType = 64  // the longest real ones are about 25 ("u7inh-32tb.480xlarge")
	maxName         = 255 // IDs, zones, regions, accounts
	maxDNSName      = 253 // a DNS name, without its trailing dot
	maxDNSLabel     = 63
)

func parseInstanceType(v string) error {
	switch {
	case len(v) > maxInstanceType:
		return fmt.Errorf("%s is not an instance type: longer than %d bytes", excerpt(v), maxInstanceType)
	case !instanceTypeRE.Get().MatchString(v):
		return fmt.Errorf("%s is not an instance type", excerpt(v))
	}
	return nil
}

func parseName(v string) error {
	switch {
	case len(v) > maxName:
		return fmt.Errorf("%s is not a single name or ID: longer than %d bytes", excerpt(v), maxName)
	case !nameRE.Get().MatchString(v):
		return fmt.Errorf("%s is not a single name or ID", excerpt(v))
	}
	return nil
}

func parseInstanceID(v string) error {
	if !instanceIDRE.Get().MatchString(v) {
		return fmt.Errorf("%s is not an instance ID (i- and 8 or 17 hexadecimal digits)", excerpt(v))
	}
	return nil
}

func parseRegion(v string) error {
	if len(v) > maxName || !regionRE.Get().MatchString(v) {
		return fmt.Errorf("%s is not a region name (such as us-west-2)", excerpt(v))
	}
	return nil
}

// parseZone returns a check of an availability zone of region: its name starts
// with the region's (us-west-2a; local and Wavelength zones too: us-west-2-lax-1a).
func parseZone(region string) func(string) error {
	return func(v string) error {
		if err := parseName(v); err != nil {
			return err
		}
		if !strings.HasPrefix(v, region) || len(v) == len(region) {
			return fmt.Errorf("%s is not a zone of region %q", excerpt(v), region)
		}
		return nil
	}
}

// checkDNSName returns why v is not a DNS name ("" when it is): dot-separated
// labels of 1-63 letters, digits, '-' and '_' (DHCP option sets allow the
// latter), 253 bytes in all, an optional trailing dot.
func checkDNSName(v string) string {
	v = strings.TrimSuffix(v, ".")
	if v == "" || len(v) > maxDNSName {
		return fmt.Sprintf("want 1-%d bytes", maxDNSName)
	}
	for _, label := range strings.Split(v, ".") {
		if label == "" || len(label) > maxDNSLabel {
			return fmt.Sprintf("a label of %d bytes, want 1-%d", len(label), maxDNSLabel)
		}
		if strings.IndexFunc(label, func(r rune) bool {
			return (r < 'a' || r > 'z') && (r < 'A' || r > 'Z') && (r < '0' || r > '9') && r != '-' && r != '_'
		}) >= 0 || label[0] == '-' || label[len(label)-1] == '-' {
			return "a label with a character other than letters, digits, '-' and '_', or starting or ending with '-'"
		}
	}
	return ""
}

// parseDomain returns a parse function for services/domain in region: a DNS
// name, and the domain of region's partition when the partition is known.
func parseDomain(dst *string, region string) func(string) error {
	return into(dst, func(v string) error {
		if why := checkDNSName(v); why != "" {
			return fmt.Errorf("%s is not a DNS name: %s", excerpt(v), why)
		}
		// Only a domain known to be another partition's is wrong for sure (amazonaws.com.cn
		// in us-west-2: a registry that does not exist); a domain eksboot does not know
		// may be a partition newer than eksboot, and is taken as IMDS says.
		if p, ok := PartitionOf(region); ok && !strings.EqualFold(v, p.Domain) && knownDomain(v) {
			return fmt.Errorf("domain %s does not belong to region %q: its partition %s has domain %s", excerpt(v), region, p.Name, p.Domain)
		}
		return nil
	})
}

// parseHostname returns a parse function for local-hostname: IMDS lists several
// space-separated names when the VPC's DHCP options name several domains; the
// first is stored in dst (the kubelet takes one name) and warn is told of the
// others. Every name must be a DNS name.
func parseHostname(dst *string, warn func(string)) func(string) error {
	return func(body string) error {
		v, err := singleLine(body)
		if err != nil {
			return err
		}
		names := strings.Fields(v)
		for _, name := range names {
			if why := checkDNSName(name); why != "" {
				return fmt.Errorf("%s is not a host name: %s", excerpt(name), why)
			}
		}
		*dst = names[0]
		if len(names) > 1 {
			warn(fmt.Sprintf("IMDS %s has %d names (%s); using the first, %q", PathLocalHostname, len(names), excerpt(v), names[0]))
		}
		return nil
	}
}

// A Partition is an AWS partition: a group of regions with one DNS domain.
type Partition struct {
	Name   string // e.g. "aws-cn"
	Domain string // e.g. "amazonaws.com.cn"
}

// knownDomain reports whether d is the domain of a partition PartitionOf knows.
func knownDomain(d string) bool {
	for _, k := range []string{"amazonaws.com", "amazonaws.com.cn", "sc2s.sgov.gov", "csp.hci.ic.gov", "cloud.adc-e.uk", "c2s.ic.gov", "amazonaws.eu"} {
		if strings.EqualFold(d, k) {
			return true
		}
	}
	return false
}

// PartitionOf returns the partition of region by its name's form, false for a
// region of no known partition (a new one: its domain is not checked).
func PartitionOf(region string) (Partition, bool) {
	if !regionRE.Get().MatchString(region) {
		return Partition{}, false
	}
	for _, p := range []struct {
		prefix string
		Partition
	}{
		{"cn-", Partition{"aws-cn", "amazonaws.com.cn"}},
		{"us-gov-", Partition{"aws-us-gov", "amazonaws.com"}},
		{"us-isob-", Partition{"aws-iso-b", "sc2s.sgov.gov"}},
		{"us-isof-", Partition{"aws-iso-f", "csp.hci.ic.gov"}},
		{"eu-isoe-", Partition{"aws-iso-e", "cloud.adc-e.uk"}},
		{"us-iso-", Partition{"aws-iso", "c2s.ic.gov"}},
		{"eusc-", Partition{"aws-eusc", "amazonaws.eu"}},
	} {
		if strings.HasPrefix(region, p.prefix) {
			return p.Partition, true
		}
	}
	if strings.Contains(region, "-iso") {
		return Partition{}, false // an isolated partition not listed above
	}
	return Partition{"aws", "amazonaws.com"}, true
}

func parseMAC(v string) error {
	hw, err := net.ParseMAC(v)
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("%s is not a MAC address", excerpt(v))
	}
	return nil
}

func parseIPv4(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return fmt.Errorf("%s is not an IPv4 address", excerpt(v))
	}
	return nil
}

func parseIPv6(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
		return fmt.Errorf("%s is not an IPv6 address", excerpt(v))
	}
	return nil
}

func parseIPv4CIDR(v string) error {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return fmt.Errorf("%s is not an IPv4 CIDR block", excerpt(v))
	}
	return nil
}

// identityLimits bound the identity document: about 15 keys on EC2, and a few
// product codes.
var identityLimits = strictjson.Limits{Bytes: MaxIdentityDocument, Values: 1000}

// parseIdentityDocument returns the identity document's facts: the region
// (required), and the others it has ("" when absent or null), each checked as
// its meta-data path's answer would be.
func parseIdentityDocument(body string) (Identity, error) {
	text, err := notEmpty(body)
	if err != nil {
		return Identity{}, err
	}
	if !strings.HasPrefix(text, "{") {
		return Identity{}, fmt.Errorf("identity document is not a JSON object: %s", excerpt(text))
	}
	var doc struct {
		Region           string `json:"region"`
		AccountID        string `json:"accountId"`
		InstanceID       string `json:"instanceId"`
		InstanceType     string `json:"instanceType"`
		AvailabilityZone string `json:"availabilityZone"`
		PrivateIP        string `json:"privateIp"`
	}
	// A key twice (instanceType twice, or once as InstanceType) is refused: the
	// decoder would keep one of them silently.
	if err := strictjson.Unmarshal([]byte(text), &doc, identityLimits); err != nil { // null leaves a field ""
		return Identity{}, fmt.Errorf("identity document: %w", err)
	}
	id := Identity(doc)
	if id.Region == "" {
		return Identity{}, errors.New("identity document has no region")
	}
	for _, field := range []struct {
		key   string
		value string
		check func(string) error
	}{
		{"region", id.Region, parseRegion},
		{"accountId", id.AccountID, parseName},
		{"instanceId", id.InstanceID, parseInstanceID},
		{"instanceType", id.InstanceType, parseInstanceType},
		{"availabilityZone", id.AvailabilityZone, parseZone(id.Region)},
		{"privateIp", id.PrivateIP, parseIPv4},
	} {
		if field.value == "" {
			continue
		}
		if err := field.check(field.value); err != nil {
			return Identity{}, fmt.Errorf("identity document %s: %w", field.key, err)
		}
	}
	return id, nil
}
