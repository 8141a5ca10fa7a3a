package maxpods

import (
	"fmt"
	"strconv"
	"strings"
)

// CNIVersion is a version of the Amazon VPC CNI plugin, such as 1.18.0. The zero value
// means "not given".
type CNIVersion struct {
	Major, Minor, Patch int
}

// ParseCNIVersion parses "x.y.z" (three whole numbers, an optional leading "v"), as
// max-pods-calculator.sh's --cni-version takes it.
func ParseCNIVersion(s string) (CNIVersion, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return CNIVersion{}, fmt.Errorf("CNI version %q: want x.y.z, such as 1.18.0", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || p == "" || p[0] == '+' || p[0] == '-' || len(p) > 6 {
			return CNIVersion{}, fmt.Errorf("CNI version %q: want x.y.z, such as 1.18.0 (%q is not a whole number)", s, p)
		}
		n[i] = v
	}
	if n == [3]int{} {
		return CNIVersion{}, fmt.Errorf("CNI version %q: want x.y.z, such as 1.18.0 (0.0.0 is not a version)", s)
	}
	return CNIVersion{Major: n[0], Minor: n[1], Patch: n[2]}, nil
}

// IsZero reports whether v is the zero value (no version given).
func (v CNIVersion) IsZero() bool { return v == CNIVersion{} }

// String returns "x.y.z".
func (v CNIVersion) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// supportsPrefixDelegation reports whether the VPC CNI hands out /28 prefixes: 1.9 and
// later (the calculator's "greater than 1.8"). An unknown version is taken as recent.
func (v CNIVersion) supportsPrefixDelegation() bool {
	return v.IsZero() || v.Major > 1 || (v.Major == 1 && v.Minor > 8)
}
