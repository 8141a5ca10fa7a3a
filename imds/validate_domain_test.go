package imds

import "testing"

// TestDomainOfAnotherPartition: services/domain is refused only when it is known to be
// another partition's domain; a domain eksboot does not know (a partition newer than
// it) is taken as IMDS says.
func TestDomainOfAnotherPartition(t *testing.T) {
	for _, tc := range []struct {
		region, domain string
		ok             bool
	}{
		{"us-west-2", "amazonaws.com", true},
		{"us-west-2", "amazonaws.com.cn", false},
		{"cn-north-1", "amazonaws.com", false},
		{"cn-north-1", "amazonaws.com.cn", true},
		{"us-iso-east-1", "c2s.ic.gov", true},
		{"us-iso-west-100", "amazonaws.com.iso", true},
		{"mars-west-1", "amazonaws.com.mars", true},
	} {
		var got string
		err := parseDomain(&got, tc.region)(tc.domain)
		if (err == nil) != tc.ok {
			t.Errorf("%s in %s: error %v, want ok %v", tc.domain, tc.region, err, tc.ok)
		}
	}
}
