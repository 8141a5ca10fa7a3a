package imdstest_test

import (
	"context"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

const macPath = "/latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/"

func startServer(t *testing.T, inst imdstest.Instance) *imdstest.Server {
	t.Helper()
	s, err := imdstest.NewServer(inst)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Fatalf("URL() = %q, want http://127.0.0.1:PORT", s.URL())
	}
	return s
}

type reply struct {
	status int
	body   string
	header http.Header
}

// do sends one request; headers are name, value pairs.
func do(ctx context.Context, method, url string, headers ...string) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, nil)
	if err != nil {
		return reply{}, err
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return reply{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return reply{}, err
	}
	return reply{resp.StatusCode, string(b), resp.Header}, nil
}

func mustDo(t *testing.T, method, url string, headers ...string) reply {
	t.Helper()
	r, err := do(context.Background(), method, url, headers...)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return r
}

func get(t *testing.T, s *imdstest.Server, path string) reply {
	t.Helper()
	return mustDo(t, http.MethodGet, s.URL()+path, "X-aws-ec2-metadata-token", imdstest.Token)
}

func TestToken(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	const ttlHeader = "X-aws-ec2-metadata-token-ttl-seconds"
	tests := []struct {
		name       string
		path       string
		ttl        string // "" sends no TTL header
		wantStatus int
	}{
		{"ttl 21600", "/latest/api/token", "21600", 200},
		{"ttl 1", "/latest/api/token", "1", 200},
		{"no ttl", "/latest/api/token", "", 400},
		{"ttl 0", "/latest/api/token", "0", 400},
		{"ttl too big", "/latest/api/token", "21601", 400},
		{"ttl not a number", "/latest/api/token", "-5", 400},
		{"other path", "/latest/meta-data/mac", "300", 403},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.ttl != "" {
				h = []string{ttlHeader, tt.ttl}
			}
			r := mustDo(t, http.MethodPut, s.URL()+tt.path, h...)
			if r.status != tt.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", r.status, tt.wantStatus, r.body)
			}
			if tt.wantStatus != 200 {
				return
			}
			if r.body != imdstest.Token {
				t.Errorf("token %q, want %q", r.body, imdstest.Token)
			}
			if got := r.header.Get(ttlHeader); got != tt.ttl {
				t.Errorf("TTL header echoed as %q, want %q", got, tt.ttl)
			}
		})
	}
}

func TestGet(t *testing.T) {
	inst := imdstest.DefaultInstance()
	inst.IPv6s = []string{"2600:1f14::1", "2600:1f14::2"}
	s := startServer(t, inst)
	tests := []struct {
		name       string
		path       string
		token      string
		wantStatus int
		wantBody   string
	}{
		{"no token", "/latest/meta-data/instance-type", "", 401, "Unauthorized"},
		{"bad token", "/latest/meta-data/instance-type", "nope", 401, "Unauthorized"},
		{"leaf", "/latest/meta-data/instance-type", imdstest.Token, 200, "m5.large"},
		{"ipv6s list", macPath + "ipv6s", imdstest.Token, 200, "2600:1f14::1\n2600:1f14::2"},
		{"query ignored", "/latest/meta-data/mac?x=1", imdstest.Token, 200, "0a:1b:2c:3d:4e:5f"},
		{"root listing", "/latest/", imdstest.Token, 200, "meta-data/\ndynamic/"},
		{
			"meta-data listing", "/latest/meta-data/", imdstest.Token, 200,
			"ami-id\ninstance-id\ninstance-type\nlocal-ipv4\nlocal-hostname\nhostname\nmac\nplacement/\nservices/\nnetwork/",
		},
		{
			"placement listing", "/latest/meta-data/placement/", imdstest.Token, 200,
			"region\navailability-zone\navailability-zone-id",
		},
		{"macs listing", "/latest/meta-data/network/interfaces/macs/", imdstest.Token, 200, "0a:1b:2c:3d:4e:5f/"},
		{"folder without slash", "/latest/meta-data/placement", imdstest.Token, 404, ""},
		{"unknown path", "/latest/meta-data/iam/info", imdstest.Token, 404, ""},
		{"token path by GET", "/latest/api/token", imdstest.Token, 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h []string
			if tt.token != "" {
				h = []string{"X-aws-ec2-metadata-token", tt.token}
			}
			r := mustDo(t, http.MethodGet, s.URL()+tt.path, h...)
			if r.status != tt.wantStatus {
				t.Fatalf("status %d, want %d (body %q)", r.status, tt.wantStatus, r.body)
			}
			if tt.wantStatus == 404 {
				if ct := r.header.Get("Content-Type"); ct != "text/html" || !strings.Contains(r.body, "404 - Not Found") {
					t.Errorf("404 answer: Content-Type %q body %q, want the HTML not-found page", ct, r.body)
				}
				return
			}
			if r.body != tt.wantBody {
				t.Errorf("body %q, want %q", r.body, tt.wantBody)
			}
		})
	}
}

func TestOverrides(t *testing.T) {
	html := "<html>oops</html>"
	inst := imdstest.DefaultInstance()
	inst.Overrides = map[string]*string{
		"latest/meta-data/local-ipv4":   nil,
		"/latest/meta-data/instance-id": &html,
	}
	s := startServer(t, inst)
	newType := "c5.xlarge"
	s.SetOverride("/latest/meta-data/instance-type", &newType)
	s.SetOverride("latest/meta-data/mac", nil)
	tests := []struct {
		path       string
		wantStatus int
		wantBody   string
	}{
		{"/latest/meta-data/local-ipv4", 404, ""},
		{"/latest/meta-data/instance-id", 200, html},
		{"/latest/meta-data/instance-type", 200, newType},
		{"/latest/meta-data/mac", 404, ""},
		{macPath + "local-ipv4s", 200, "192.168.45.67"},
		// Listings are left as they were.
		{"/latest/meta-data/", 200, "ami-id\ninstance-id\ninstance-type\nlocal-ipv4\nlocal-hostname\nhostname\nmac\nplacement/\nservices/\nnetwork/"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			r := get(t, s, tt.path)
			if r.status != tt.wantStatus || (tt.wantStatus == 200 && r.body != tt.wantBody) {
				t.Errorf("got %d %q, want %d %q", r.status, r.body, tt.wantStatus, tt.wantBody)
			}
		})
	}
}

func TestRequests(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	mustDo(t, http.MethodPut, s.URL()+"/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds", "60")
	get(t, s, "/latest/meta-data/mac?a=b")
	mustDo(t, http.MethodGet, s.URL()+"/latest/meta-data/mac")
	get(t, s, "/nope")
	want := []imdstest.Request{
		{Method: "PUT", Path: "/latest/api/token", Status: 200},
		{Method: "GET", Path: "/latest/meta-data/mac", Status: 200},
		{Method: "GET", Path: "/latest/meta-data/mac", Status: 401},
		{Method: "GET", Path: "/nope", Status: 404},
	}
	if got := s.Requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("Requests() = %+v\nwant %+v", got, want)
	}
}

func TestHang(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	const path = "/latest/meta-data/instance-type"
	s.SetHang(path, true)

	// A hung request fails only by the client's own deadline.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if r, err := do(ctx, http.MethodGet, s.URL()+path, "X-aws-ec2-metadata-token", imdstest.Token); err == nil {
		t.Fatalf("hung path answered %d %q", r.status, r.body)
	}
	if got := s.Requests(); len(got) != 1 || got[0] != (imdstest.Request{Method: "GET", Path: path}) {
		t.Errorf("Requests() = %+v, want the hung GET with status 0", got)
	}
	if r := get(t, s, "/latest/meta-data/mac"); r.status != 200 {
		t.Errorf("other path: status %d while %s hangs", r.status, path)
	}

	s.SetHang(path, false)
	if r := get(t, s, path); r.status != 200 || r.body != "m5.large" {
		t.Errorf("after SetHang(false): %d %q", r.status, r.body)
	}
}

func TestCloseReleasesHungRequests(t *testing.T) {
	s, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	const path = "/latest/meta-data/mac"
	s.SetHang(path, true)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // guard only
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := do(ctx, http.MethodGet, s.URL()+path, "X-aws-ec2-metadata-token", imdstest.Token)
		done <- err
	}()
	for len(s.Requests()) == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the hung request never reached the server")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	select {
	case err := <-done: // answered or cut off: either way no longer hung
		t.Logf("the hung request ended: %v", err)
	case <-ctx.Done():
		t.Fatal("request still hung after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
