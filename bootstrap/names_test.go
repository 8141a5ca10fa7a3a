package bootstrap

import (
	"regexp"
	"strings"
	"testing"
)

// The patterns that isClusterName, isAccountID, isImageTag and isDNSLabel implement
// by hand (too slow to compile at every start, see validate.go).
var (
	clusterNameRE = regexp.MustCompile(`^[0-9A-Za-z][A-Za-z0-9_-]{0,99}$`)
	accountRE     = regexp.MustCompile(`^[0-9]{12}$`)
	imageTagRE    = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)
	dnsLabelRE    = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$`)
)

// TestNameChecksMatchPatterns compares each hand-written check with its pattern on
// every string of up to three characters from an alphabet that hits each character
// class, and on strings around each length limit.
func TestNameChecksMatchPatterns(t *testing.T) {
	checks := []struct {
		name  string
		check func(string) bool
		re    *regexp.Regexp
	}{
		{"cluster name", isClusterName, clusterNameRE},
		{"account", isAccountID, accountRE},
		{"image tag", isImageTag, imageTagRE},
		{"DNS label", isDNSLabel, dnsLabelRE},
	}
	alphabet := []string{"a", "Z", "0", "9", "_", "-", ".", "/", " ", "é", "\x00", "\n"}
	inputs := []string{""}
	for _, a := range alphabet {
		inputs = append(inputs, a)
		for _, b := range alphabet {
			inputs = append(inputs, a+b)
			for _, c := range alphabet {
				inputs = append(inputs, a+b+c)
			}
		}
	}
	for _, n := range []int{11, 12, 13, 61, 62, 63, 64, 99, 100, 101, 127, 128, 129} {
		for _, fill := range []string{"a", "1", "-", "_", "."} {
			for _, end := range []string{"", "a", "-", "."} {
				inputs = append(inputs, strings.Repeat(fill, n)+end, "x"+strings.Repeat(fill, n-1)+end)
			}
		}
	}
	for _, c := range checks {
		mismatches := 0
		for _, in := range inputs {
			if got, want := c.check(in), c.re.MatchString(in); got != want {
				if mismatches++; mismatches <= 5 {
					t.Errorf("%s(%q) = %t, the pattern says %t", c.name, in, got, want)
				}
			}
		}
	}
}
