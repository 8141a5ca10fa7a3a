package bootstrap

import (
	"maps"
	"path/filepath"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/goldencase"
)

// TestBootstrapIMDSGETs: the exact paths a bootstrap GETs from IMDS, each once, after
// one token PUT: for an IPv4 node (golden case 01) the identity document and only
// what it lacks, and for an IPv6 node (10-ipv6) the interface's IPv6 addresses too.
// A change that reads a fact again, or from a second path, fails here.
func TestBootstrapIMDSGETs(t *testing.T) {
	tests := []struct {
		golden string
		ipv6   bool
	}{
		{"01-m5large-usw2-vpc192", false},
		{"10-ipv6", true},
	}
	for _, tt := range tests {
		t.Run(tt.golden, func(t *testing.T) {
			c, err := goldencase.Load(filepath.Join(goldenDir, tt.golden))
			must(t, err)
			c.StartFor(t) // the AWS SDK at the case's EC2
			srv, err := imdstest.NewServer(c.IMDS)
			must(t, err)
			t.Cleanup(func() { srv.Close() })
			must(t, runFaulty(c, srv, t.TempDir(), 20*time.Second, nil))

			want := map[string]int{}
			for _, p := range []string{
				imds.PathIdentityDocument, imds.PathMAC, imds.PathVPCIPv4CIDRs(c.IMDS.MAC),
				imds.PathDomain, imds.PathLocalHostname,
			} {
				want["/"+p] = 1
			}
			if tt.ipv6 {
				want["/"+imds.PathIPv6s(c.IMDS.MAC)] = 1
			}
			gets, puts := map[string]int{}, 0
			for _, r := range srv.Requests() {
				switch {
				case r.Method == "GET":
					gets[r.Path]++
				case r.Method == "PUT" && r.Path == "/"+imds.PathToken:
					puts++
				default:
					t.Errorf("unexpected request %+v", r)
				}
			}
			if !maps.Equal(gets, want) {
				t.Errorf("GETs (path: count) = %v\nwant %v", gets, want)
			}
			if puts != 1 {
				t.Errorf("%d token PUTs, want 1", puts)
			}
		})
	}
}
