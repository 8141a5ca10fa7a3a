package eksapitest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"
)

func newServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	s.AddCluster(Cluster{
		Name: "demo", Endpoint: "https://demo.example.com", CAData: "Q0E=", ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4",
		Statuses: []string{"CREATING", "ACTIVE"},
	})
	return s
}

// get returns the status, the X-Amzn-Errortype header and the body of GET path.
func get(t *testing.T, s *Server, method, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"), string(b)
}

func TestServer(t *testing.T) {
	s := newServer(t)
	tests := []struct {
		name, method, path string
		setup              func()
		status             int
		errType            string
		check              func(body string) bool
	}{
		{"creating: no endpoint, no CA", "GET", "/clusters/demo", nil, 200, "", func(b string) bool {
			var v describeClusterJSON
			return json.Unmarshal([]byte(b), &v) == nil && v.Cluster.Status == "CREATING" && v.Cluster.Endpoint == nil && v.Cluster.CertificateAuthority.Data == nil
		}},
		{"then active", "GET", "/clusters/demo", nil, 200, "", func(b string) bool {
			var v describeClusterJSON
			return json.Unmarshal([]byte(b), &v) == nil && v.Cluster.Status == "ACTIVE" && *v.Cluster.Endpoint == "https://demo.example.com" &&
				*v.Cluster.CertificateAuthority.Data == "Q0E=" && *v.Cluster.KubernetesNetworkConfig.ServiceIPv4CIDR == "10.100.0.0/16"
		}},
		{"unknown cluster", "GET", "/clusters/nope", nil, 404, "ResourceNotFoundException", func(b string) bool {
			return b == `{"__type":"ResourceNotFoundException","message":"No cluster found for name: nope.","clusterName":"nope"}`
		}},
		{"other operations", "POST", "/clusters", nil, 404, "UnknownOperationException", nil},
		{"throttled once", "GET", "/clusters/demo", func() { s.Throttle(1) }, 429, "ThrottlingException", nil},
		{"then answered", "GET", "/clusters/demo", nil, 200, "", nil},
		{"fixed error", "GET", "/clusters/demo", func() { s.SetError(403, "AccessDeniedException", "no") }, 403, "AccessDeniedException", nil},
		{"error removed", "GET", "/clusters/demo", func() { s.SetError(0, "", "") }, 200, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
			}
			status, errType, body := get(t, s, tc.method, tc.path)
			if status != tc.status || errType != tc.errType || (tc.check != nil && !tc.check(body)) {
				t.Errorf("got %d %q %s; want %d %q", status, errType, body, tc.status, tc.errType)
			}
		})
	}
	if got, want := s.Calls(), len(tests); got != want {
		t.Errorf("Calls() = %d, want %d", got, want)
	}
	if s.Throttled() != 1 {
		t.Errorf("Throttled() = %d, want 1", s.Throttled())
	}
}

func TestRateLimit(t *testing.T) {
	s := newServer(t)
	s.SetRateLimit(5, time.Hour) // a bucket of 5 that does not refill during the test
	var ok, throttled int
	for range 8 {
		switch status, _, _ := get(t, s, "GET", "/clusters/demo"); status {
		case 200:
			ok++
		case 429:
			throttled++
		}
	}
	if ok != 5 || throttled != 3 || s.Throttled() != 3 {
		t.Errorf("%d answered, %d throttled (server: %d); want 5 and 3", ok, throttled, s.Throttled())
	}
}

func TestHangUntilTheClientGivesUp(t *testing.T) {
	s := newServer(t)
	s.SetHang(true)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", s.URL()+"/clusters/demo", nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d; want no answer", resp.StatusCode)
	}
	if s.Calls() != 1 {
		t.Errorf("Calls() = %d, want 1", s.Calls())
	}
}
