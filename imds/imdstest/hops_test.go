package imdstest_test

import (
	"net/http"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestHopLimitTokenAnswer: with a hop limit the token answer is the same token,
// TTL header and status (the TTL on the wire is read by doctor's TestHopLimitOne,
// which needs a raw socket).
func TestHopLimitTokenAnswer(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	s.SetHopLimit(1)
	r := mustDo(t, http.MethodPut, s.URL()+"/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds", "60")
	if r.status != http.StatusOK || r.body != imdstest.Token || r.header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") != "60" {
		t.Errorf("token answer %d %q %v", r.status, r.body, r.header)
	}
	if got := get(t, s, "/latest/meta-data/instance-id"); got.status != http.StatusOK {
		t.Errorf("GET with the token: %d", got.status)
	}
	if reqs := s.Requests(); len(reqs) != 2 || reqs[0].Status != http.StatusOK {
		t.Errorf("requests %+v", reqs)
	}
}
