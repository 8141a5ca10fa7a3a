package imds

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"unicode"
)

var (
	// instanceTypeRE matches instance types such as "m5.large" or "u-6tb1.metal".
	instanceTypeRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9][a-z0-9-]*\.[a-z0-9-]+$`) })
	// nameRE matches IDs, zones, regions and DNS names: one word, no markup.
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })
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

// excerpt quotes s for an error message, shortened when long.
func excerpt(s string) string {
	const max = 80
	if r := []rune(s); len(r) > max {
		return fmt.Sprintf("%q...", string(r[:max]))
	}
	return fmt.Sprintf("%q", s)
}

func parseInstanceType(v string) error {
	if !instanceTypeRE().MatchString(v) {
		return fmt.Errorf("%q is not an instance type", v)
	}
	return nil
}

func parseName(v string) error {
	if !nameRE().MatchString(v) {
		return fmt.Errorf("%q is not a single name or ID", v)
	}
	return nil
}

// parseHostname accepts one or more space-separated host names (IMDS lists
// several when the VPC's DHCP options name several domains).
func parseHostname(v string) error {
	for _, name := range strings.Fields(v) {
		if !nameRE().MatchString(name) {
			return fmt.Errorf("%q is not a host name", v)
		}
	}
	return nil
}

func parseMAC(v string) error {
	hw, err := net.ParseMAC(v)
	if err != nil || len(hw) != 6 {
		return fmt.Errorf("%q is not a MAC address", v)
	}
	return nil
}

func parseIPv4(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is4() {
		return fmt.Errorf("%q is not an IPv4 address", v)
	}
	return nil
}

func parseIPv6(v string) error {
	a, err := netip.ParseAddr(v)
	if err != nil || !a.Is6() || a.Is4In6() || a.Zone() != "" {
		return fmt.Errorf("%q is not an IPv6 address", v)
	}
	return nil
}

func parseIPv4CIDR(v string) error {
	p, err := netip.ParsePrefix(v)
	if err != nil || !p.Addr().Is4() {
		return fmt.Errorf("%q is not an IPv4 CIDR block", v)
	}
	return nil
}

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
	if err := json.Unmarshal([]byte(text), &doc); err != nil { // null leaves a field ""
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
		{"region", id.Region, parseName},
		{"accountId", id.AccountID, parseName},
		{"instanceId", id.InstanceID, parseName},
		{"instanceType", id.InstanceType, parseInstanceType},
		{"availabilityZone", id.AvailabilityZone, parseName},
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
