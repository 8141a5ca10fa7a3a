package imds_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/siminstance"
)

const (
	tokenPath = "latest/api/token"
	vpcCIDRs  = "latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/vpc-ipv4-cidr-blocks"
	htmlPage  = "<html><body><h1>401 - Unauthorized</h1></body></html>"
)

// count returns how many requests of the log used method on path (no leading "/").
func count(reqs []imdstest.Request, method, path string) int {
	n := 0
	for _, r := range reqs {
		if r.Method == method && r.Path == "/"+path {
			n++
		}
	}
	return n
}

func times(n int, f imdstest.Fault) imdstest.Fault { f.Times = n; return f }

var (
	status = func(code int) imdstest.Fault { return imdstest.Fault{Kind: imdstest.FaultStatus, Status: code} }
	body   = func(b string) imdstest.Fault { return imdstest.Fault{Kind: imdstest.FaultBody, Body: b} }
	hang   = imdstest.Fault{Kind: imdstest.FaultHang}
	closed = imdstest.Fault{Kind: imdstest.FaultClose}
	expiry = imdstest.Fault{Kind: imdstest.FaultTokenExpiry}
)

func TestFetchSurvivesTransientFaults(t *testing.T) {
	tests := []struct {
		name     string
		path     string
		faults   []imdstest.Fault
		attempt  time.Duration // attempt timeout; 0: fast's
		wantPUTs int
		wantGETs int // GETs of path (for the token path: of the identity document); -1: at least 2
	}{
		{"503 twice", imds.PathDomain, []imdstest.Fault{times(2, status(503))}, 0, 1, 3},
		{"429, then 500", imds.PathMAC, []imdstest.Fault{times(1, status(429)), times(1, status(500))}, 0, 1, 3},
		{"404 twice: the path appears late", imds.PathMAC, []imdstest.Fault{times(2, status(404))}, 0, 1, 3},
		{"document appears late", imds.PathIdentityDocument, []imdstest.Fault{times(2, status(404))}, 0, 1, 3},
		{"vpc cidrs appear late", vpcCIDRs, []imdstest.Fault{times(3, status(404))}, 0, 1, 4},
		{"401 twice", imds.PathLocalHostname, []imdstest.Fault{times(2, status(401))}, 0, -1, 3},
		{"token expires", imds.PathIdentityDocument, []imdstest.Fault{times(1, expiry)}, 0, 2, 2},
		{"connection closed", imds.PathDomain, []imdstest.Fault{times(1, closed)}, 0, 1, 2},
		{"hangs once", vpcCIDRs, []imdstest.Fault{times(1, hang)}, 200 * time.Millisecond, 1, -1},
		{"slow answers", imds.PathIdentityDocument, []imdstest.Fault{{Kind: imdstest.FaultDelay, Delay: 20 * time.Millisecond}}, 0, 1, 1},
		{"HTML page once", imds.PathDomain, []imdstest.Fault{times(1, body(htmlPage))}, 0, 1, 2},
		{"empty body twice", imds.PathMAC, []imdstest.Fault{times(2, body(""))}, 0, 1, 3},
		{"token PUT 503 twice", tokenPath, []imdstest.Fault{times(2, status(503))}, 0, 3, 1},
		{"token PUT hangs once", tokenPath, []imdstest.Fault{times(1, hang)}, 200 * time.Millisecond, 2, 1},
		{"token PUT answers an HTML page once", tokenPath, []imdstest.Fault{times(1, body(htmlPage))}, 0, 2, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startFake(t, imdstest.DefaultInstance())
			s.SetFaults(tt.path, tt.faults...)
			opts := fast(s, 30*time.Second)
			if tt.attempt != 0 {
				opts.AttemptTimeout = tt.attempt
			}
			got, err := imds.Fetch(context.Background(), opts)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if want := factsOf(imdstest.DefaultInstance()); !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch =\n %+v\nwant\n %+v", got, want)
			}
			reqs := s.Requests()
			getPath := tt.path
			if getPath == tokenPath {
				getPath = imds.PathIdentityDocument
			}
			puts, gets := count(reqs, "PUT", tokenPath), count(reqs, "GET", getPath)
			if tt.wantPUTs >= 0 && puts != tt.wantPUTs {
				t.Errorf("%d token PUTs, want %d (log %+v)", puts, tt.wantPUTs, reqs)
			}
			if (tt.wantGETs < 0 && gets < 2) || (tt.wantGETs >= 0 && gets != tt.wantGETs) {
				t.Errorf("%d GETs of %s, want %d (-1: at least 2) (log %+v)", gets, getPath, tt.wantGETs, reqs)
			}
		})
	}
}

func TestFetchFailsOnPermanentFaults(t *testing.T) {
	tests := []struct {
		name         string
		path         string // faulty path
		fault        imdstest.Fault
		timeout      time.Duration
		wantPath     string // the path the error names
		wantErr      []string
		wantStatus   int
		wantAttempts int // 0: at least 2
	}{
		{
			"403", imds.PathDomain, status(403), 30 * time.Second, imds.PathDomain,
			[]string{"status 403 (Forbidden)"},
			403, 1,
		},
		{
			"HTML page for good", imds.PathIdentityDocument, body(htmlPage), 30 * time.Second, imds.PathIdentityDocument,
			[]string{"answer is an HTML page", "3 invalid answers in 3 attempts"},
			200, 3,
		},
		{
			"empty body for good", imds.PathMAC, body(""), 30 * time.Second, imds.PathMAC,
			[]string{"empty answer", "3 invalid answers"},
			200, 3,
		},
		{
			"503 until the deadline", vpcCIDRs, status(503), 300 * time.Millisecond, vpcCIDRs,
			[]string{"gave up at the 300ms deadline after ", "attempts (last status 503): status 503 (Service Unavailable)"},
			503, 0,
		},
		{
			"404 of a required path until the deadline", imds.PathMAC, status(404), 300 * time.Millisecond, imds.PathMAC,
			[]string{"gave up at the 300ms deadline", "(last status 404): not found (404)"},
			404, 0,
		},
		{
			"token expires at every answer", imds.PathIdentityDocument, expiry, 300 * time.Millisecond, imds.PathIdentityDocument,
			[]string{"gave up at the 300ms deadline", "(last status 401): unauthorized (401)"},
			401, 0,
		},
		{
			"connection closed for good", imds.PathLocalHostname, closed, 300 * time.Millisecond, imds.PathLocalHostname,
			[]string{"gave up at the 300ms deadline", "(no HTTP status): no answer: "},
			0, 0,
		},
		{
			"hangs for good", imds.PathDomain, hang, 300 * time.Millisecond, imds.PathDomain,
			[]string{"gave up at the 300ms deadline", "no answer within the 100ms attempt timeout"},
			0, 0,
		},
		{
			"token refused", tokenPath, status(403), 30 * time.Second, imds.PathIdentityDocument,
			[]string{"refused an IMDSv2 session token (PUT latest/api/token: status 403 (Forbidden)) and IMDSv1 fallback is off"},
			0, 1,
		},
		{
			"token PUT hangs", tokenPath, hang, 300 * time.Millisecond, imds.PathIdentityDocument,
			[]string{"gave up at the 300ms deadline", "session token (PUT latest/api/token): no answer"},
			0, 0,
		},
		{
			"token PUT 500 until the deadline", tokenPath, status(500), 300 * time.Millisecond, imds.PathIdentityDocument,
			[]string{"gave up at the 300ms deadline", "session token (PUT latest/api/token): status 500"},
			0, 0,
		},
		{
			"token is no token", tokenPath, body(""), 30 * time.Second, imds.PathIdentityDocument,
			[]string{"session token (PUT latest/api/token): not a token: empty answer"},
			0, 3,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // most wait out a deadline
			s := startFake(t, imdstest.DefaultInstance())
			s.SetFaults(tt.path, tt.fault)
			opts := fast(s, tt.timeout)
			opts.AttemptTimeout = 100 * time.Millisecond
			f, err := imds.Fetch(context.Background(), opts)
			if err == nil {
				t.Fatalf("Fetch = %+v, want an error", f)
			}
			var pe *imds.PathError
			if !errors.As(err, &pe) || pe.Path != tt.wantPath {
				t.Fatalf("error %q: want a *PathError for %s", err, tt.wantPath)
			}
			msg := err.Error()
			for _, w := range append([]string{"imds: " + tt.wantPath + ": "}, tt.wantErr...) {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			if pe.Status != tt.wantStatus {
				t.Errorf("Status = %d, want %d", pe.Status, tt.wantStatus)
			}
			if (tt.wantAttempts == 0 && pe.Attempts < 2) || (tt.wantAttempts != 0 && pe.Attempts != tt.wantAttempts) {
				t.Errorf("Attempts = %d, want %d (0: at least 2)", pe.Attempts, tt.wantAttempts)
			}
			if !strings.Contains(msg, fmt.Sprintf("after %d attempts", pe.Attempts)) && tt.wantAttempts == 0 {
				t.Errorf("error %q does not give the attempts (%d)", msg, pe.Attempts)
			}
		})
	}
}

func TestFetchIMDSv1Fallback(t *testing.T) {
	for _, allow := range []bool{false, true} {
		t.Run(fmt.Sprintf("AllowIMDSv1=%v", allow), func(t *testing.T) {
			s := startFake(t, imdstest.DefaultInstance())
			s.SetIMDSv1(true)
			s.SetFaults(tokenPath, status(403)) // IMDSv2 not offered
			opts := fast(s, 30*time.Second)
			opts.AllowIMDSv1 = allow
			got, err := imds.Fetch(context.Background(), opts)
			if !allow {
				if err == nil || !strings.Contains(err.Error(), "IMDSv1 fallback is off") {
					t.Fatalf("Fetch = %v, %v; want an error saying IMDSv1 fallback is off", got, err)
				}
				if n := count(s.Requests(), "GET", imds.PathIdentityDocument); n != 0 {
					t.Errorf("%d GETs without a token, want none", n)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if want := factsOf(imdstest.DefaultInstance()); !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

// A path that fails for good ends the Fetch: the others are abandoned, not
// waited for until the deadline, and not reported.
func TestFetchAbandonsOtherPathsOnFailure(t *testing.T) {
	s := startFake(t, imdstest.DefaultInstance())
	s.SetFaults(imds.PathMAC, status(403))
	s.SetFaults(imds.PathLocalHostname, hang)
	_, err := imds.Fetch(context.Background(), fast(s, 30*time.Second))
	if err == nil {
		t.Fatal("Fetch succeeded")
	}
	if msg := err.Error(); msg != "imds: "+imds.PathMAC+": status 403 (Forbidden)" {
		t.Errorf("error %q: want only the MAC's 403", msg)
	}
}

// BenchmarkFetch fetches the facts of an IPv4 node from the loopback fake, in parallel as
// Fetch does and one path at a time, with the fake answering at once and
// after 2ms (about what a busy instance's IMDS takes); parallel-sdk is Fetch
// through aws-sdk-go-v2's client, as before the own one (FetchWithSDK).
func BenchmarkFetch(b *testing.B) {
	for _, latency := range []time.Duration{0, 2 * time.Millisecond} {
		for _, mode := range []struct {
			name  string
			fetch func(context.Context, imds.Options) (*imds.Facts, error)
		}{{"parallel", imds.Fetch}, {"sequential", imds.FetchSequential}, {"parallel-sdk", imds.FetchWithSDK}} {
			b.Run(fmt.Sprintf("latency=%v/%s", latency, mode.name), func(b *testing.B) {
				s, err := imdstest.NewServer(imdstest.DefaultInstance())
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				if latency > 0 {
					for _, p := range []string{
						tokenPath, imds.PathIdentityDocument, imds.PathDomain, imds.PathMAC,
						imds.PathLocalHostname, vpcCIDRs,
					} {
						s.SetFaults(p, imdstest.Fault{Kind: imdstest.FaultDelay, Delay: latency})
					}
				}
				opts := imds.Options{Endpoint: s.URL(), Timeout: 30 * time.Second}
				b.ResetTimer()
				for b.Loop() {
					if _, err := mode.fetch(context.Background(), opts); err != nil {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				reqs := s.Requests()
				n := float64(b.N)
				b.ReportMetric(float64(len(reqs))/n, "requests/op")
				b.ReportMetric(float64(count(reqs, "PUT", tokenPath))/n, "PUTs/op")
			})
		}
	}
}

// local-ipv4, read when the identity document has no privateIp, is optional,
// but required when the caller needs the address: then a late 404 is waited
// out. With privateIp in the document it is not read at all.
func TestFetchRequireLocalIPv4(t *testing.T) {
	for _, tt := range []struct {
		require, privateIP bool
		want               string
		wantGETs           int // of local-ipv4
	}{
		{require: false, privateIP: false, want: "", wantGETs: 1}, // 404: no IPv4 address
		{require: true, privateIP: false, want: "192.168.45.67", wantGETs: 3},
		{require: false, privateIP: true, want: "192.168.45.67", wantGETs: 0},
		{require: true, privateIP: true, want: "192.168.45.67", wantGETs: 0},
	} {
		t.Run(fmt.Sprintf("RequireLocalIPv4=%v,privateIp=%v", tt.require, tt.privateIP), func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			if !tt.privateIP {
				doc := siminstance.IdentityDocument(inst, "privateIp")
				inst.Overrides = map[string]*string{imds.PathIdentityDocument: &doc}
			}
			s := startFake(t, inst)
			s.SetFaults(imds.PathLocalIPv4, times(2, status(404)))
			opts := fast(s, 30*time.Second)
			opts.RequireLocalIPv4 = tt.require
			got, err := imds.Fetch(context.Background(), opts)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if got.LocalIPv4 != tt.want {
				t.Errorf("LocalIPv4 = %q, want %q", got.LocalIPv4, tt.want)
			}
			if n := count(s.Requests(), "GET", imds.PathLocalIPv4); n != tt.wantGETs {
				t.Errorf("%d GETs of %s, want %d", n, imds.PathLocalIPv4, tt.wantGETs)
			}
		})
	}
}
