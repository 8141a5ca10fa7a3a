package imds_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestFetchValidatesEveryFact: a fact that no real instance has fails the Fetch
// naming the path, with at most a short excerpt of the value.
func TestFetchValidatesEveryFact(t *testing.T) {
	long := "m5." + strings.Repeat("a", 10<<10)
	tests := []struct {
		name   string
		absent string
		region string // the instance's region ("" us-west-2)
		path   string
		body   string
		want   []string
	}{
		{"instance type of 10 KiB", "instanceType", "", imds.PathInstanceType, long, []string{"not an instance type", "longer than 64"}},
		{"instance type of 65 bytes", "instanceType", "", imds.PathInstanceType, "m5." + strings.Repeat("a", 62), []string{"longer than 64"}},
		{"document instance type of 10 KiB", "", "", imds.PathIdentityDocument, *docWith("instanceType", long), []string{"identity document instanceType", "longer than 64"}},
		{"instance type in capitals", "instanceType", "", imds.PathInstanceType, "M5.LARGE", []string{"not an instance type"}},
		{"china domain in us-west-2", "", "", imds.PathDomain, "amazonaws.com.cn", []string{`"amazonaws.com.cn"`, `region "us-west-2"`, "partition aws", "amazonaws.com"}},
		{"global domain in cn-north-1", "", "cn-north-1", imds.PathDomain, "amazonaws.com", []string{`"amazonaws.com"`, `region "cn-north-1"`, "aws-cn", "amazonaws.com.cn"}},
		{"domain of 10 KiB", "", "", imds.PathDomain, strings.Repeat("a", 10<<10) + ".com", []string{"not a DNS name"}},
		{"MAC of 10 KiB", "", "", imds.PathMAC, strings.Repeat("z", 10<<10), []string{"not a MAC address"}},
		{"host name of 10 KiB", "", "", imds.PathLocalHostname, strings.Repeat("a", 10<<10), []string{"not a host name"}},
		{"host name label of 64 bytes", "", "", imds.PathLocalHostname, strings.Repeat("a", 64) + ".ec2.internal", []string{"not a host name"}},
		{"instance id of 10 KiB", "instanceId", "", imds.PathInstanceID, "i-" + strings.Repeat("0", 10<<10), []string{"not an instance ID"}},
		{"instance id not one", "instanceId", "", imds.PathInstanceID, "ip-10-0-0-1.ec2.internal", []string{"not an instance ID"}},
		{"document instance id not one", "", "", imds.PathIdentityDocument, *docWith("instanceId", "attacker.example"), []string{"identity document instanceId", "not an instance ID"}},
		{"document region not one", "", "", imds.PathIdentityDocument, *docWith("region", "attacker.example"), []string{"identity document region", "not a region"}},
		{"document zone of another region", "", "", imds.PathIdentityDocument, *docWith("availabilityZone", "eu-west-1a"), []string{"identity document availabilityZone", `"eu-west-1a" is not a zone of region "us-west-2"`}},
		{"document with instanceType twice", "", "", imds.PathIdentityDocument, withDuplicate("instanceType", "p5.48xlarge"), []string{"identity document: instanceType: a key given twice"}},
		{"document with region twice in two cases", "", "", imds.PathIdentityDocument, withDuplicate("Region", "us-east-1"), []string{"identity document: Region: a key given twice (also as \"region\""}},
		{"zone of another region", "availabilityZone", "", imds.PathAvailabilityZone, "eu-west-1a", []string{`"eu-west-1a" is not a zone of region "us-west-2"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			inst := imdstest.DefaultInstance()
			if tt.region != "" {
				inst.Region, inst.AvailabilityZone, inst.Domain = tt.region, tt.region+"a", "amazonaws.com.cn"
			}
			inst.Overrides = map[string]*string{tt.path: str(tt.body)}
			if tt.absent != "" {
				inst.Overrides[imds.PathIdentityDocument] = withoutKeys(tt.absent)
			}
			s := startFake(t, inst)
			f, err := imds.Fetch(context.Background(), fast(s, 30*time.Second))
			if err == nil {
				t.Fatalf("Fetch = %+v, want an error", f)
			}
			msg := err.Error()
			for _, w := range append([]string{"imds: " + tt.path + ": "}, tt.want...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if len(msg) > 400 {
				t.Errorf("error of %d bytes, want at most 400 (a short excerpt of the value): %.200s...", len(msg), msg)
			}
		})
	}
}

// TestFetchTakesTheFirstOfSeveralHostNames: IMDS lists several names when the
// VPC's DHCP options give several domains; the kubelet takes one, so Fetch keeps
// the first and says so in Facts.Warnings.
func TestFetchTakesTheFirstOfSeveralHostNames(t *testing.T) {
	inst := imdstest.DefaultInstance()
	inst.Overrides = map[string]*string{imds.PathLocalHostname: str("ip-192-168-45-67.ec2.internal  example.com corp.example")}
	s := startFake(t, inst)
	f, err := imds.Fetch(context.Background(), fast(s, 30*time.Second))
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	if f.LocalHostname != "ip-192-168-45-67.ec2.internal" {
		t.Errorf("LocalHostname = %q, want the first name", f.LocalHostname)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0], "3 names") || !strings.Contains(f.Warnings[0], `"ip-192-168-45-67.ec2.internal"`) {
		t.Errorf("Warnings = %q, want one saying it has 3 names and uses the first", f.Warnings)
	}
}

// withDuplicate is the default instance's identity document with key added
// again, at its end, with value.
func withDuplicate(key, value string) string {
	doc := strings.TrimSpace(*withoutKeys())
	return strings.TrimSuffix(doc, "}") + fmt.Sprintf(", %q: %q}", key, value)
}
