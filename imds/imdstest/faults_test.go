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

const typePath = "/latest/meta-data/instance-type"

func TestFaults(t *testing.T) {
	tests := []struct {
		name       string
		faults     []imdstest.Fault
		wantStatus []int    // status of each of the GETs in turn; 0: no answer
		wantBody   string   // body of the first GET, when it answered
		wantLog    []string // Fault of each logged request
	}{
		{
			name:       "delay, then the value",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultDelay, Delay: 10 * time.Millisecond, Times: 1}},
			wantStatus: []int{200, 200}, wantBody: "m5.large",
			wantLog: []string{"delay 10ms", ""},
		},
		{
			name:       "503 twice, then the value",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultStatus, Status: 503, Times: 2}},
			wantStatus: []int{503, 503, 200}, wantBody: "503 - Service Unavailable",
			wantLog: []string{"status 503", "status 503", ""},
		},
		{
			name:       "404 page",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultStatus, Status: 404, Times: 1}},
			wantStatus: []int{404, 200}, wantBody: "404 - Not Found",
			wantLog: []string{"status 404", ""},
		},
		{
			name: "429, then an HTML body, then an empty one, then the value",
			faults: []imdstest.Fault{
				{Kind: imdstest.FaultStatus, Status: 429, Times: 1},
				{Kind: imdstest.FaultBody, Body: "<html>oops</html>", Times: 1},
				{Kind: imdstest.FaultBody, Body: "", Times: 1},
			},
			wantStatus: []int{429, 200, 200, 200}, wantBody: "429 - Too Many Requests",
			wantLog: []string{"status 429", `body "<html>oops</html>"`, `body ""`, ""},
		},
		{
			name:       "forever",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultStatus, Status: 500}},
			wantStatus: []int{500, 500, 500}, wantBody: "500 - Internal Server Error",
			wantLog: []string{"status 500", "status 500", "status 500"},
		},
		{
			name:       "connection closed",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultClose, Times: 1}},
			wantStatus: []int{0, 200},
			wantLog:    []string{"close", ""},
		},
		{
			name:       "hang",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultHang, Times: 1}},
			wantStatus: []int{0, 200},
			wantLog:    []string{"hang", ""},
		},
		{
			name:       "a large answer",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultLarge, Size: 1 << 20, Times: 1}},
			wantStatus: []int{200, 200}, wantBody: strings.Repeat("x", 1<<20),
			wantLog: []string{"large 1048576", ""},
		},
		{
			name:       "a redirect",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultRedirect, Location: "http://127.0.0.1:9/elsewhere", Times: 1}},
			wantStatus: []int{307, 200},
			wantLog:    []string{"redirect 307 http://127.0.0.1:9/e...", ""},
		},
		{
			name:       "a 301",
			faults:     []imdstest.Fault{{Kind: imdstest.FaultRedirect, Status: 301, Location: "/x", Times: 1}},
			wantStatus: []int{301, 200},
			wantLog:    []string{"redirect 301 /x", ""},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := startServer(t, imdstest.DefaultInstance())
			s.SetFaults(typePath, tt.faults...)
			for i, want := range tt.wantStatus {
				// A fresh client per request: a closed connection is not retried by the transport.
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.URL()+typePath, nil)
				req.Header.Set("X-aws-ec2-metadata-token", imdstest.Token)
				c := &http.Client{
					Transport:     &http.Transport{DisableKeepAlives: true},
					CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
				}
				resp, err := c.Do(req)
				got, body := 0, ""
				if err == nil {
					got = resp.StatusCode
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					body = string(b)
				}
				cancel()
				if got != want {
					t.Fatalf("GET %d: status %d (err %v), want %d", i+1, got, err, want)
				}
				if i == 0 && want != 0 && !strings.Contains(body, tt.wantBody) {
					t.Errorf("GET 1: body %q, want it to contain %q", body, tt.wantBody)
				}
			}
			var faults []string
			for _, r := range s.Requests() {
				faults = append(faults, r.Fault)
			}
			if !reflect.DeepEqual(faults, tt.wantLog) {
				t.Errorf("logged faults %q, want %q", faults, tt.wantLog)
			}
		})
	}
}

func TestTokenExpiry(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	s.SetFaults(typePath, imdstest.Fault{Kind: imdstest.FaultTokenExpiry, Times: 1})
	if r := get(t, s, typePath); r.status != 401 {
		t.Fatalf("GET with the token at expiry: %d, want 401", r.status)
	}
	if r := get(t, s, "/latest/meta-data/mac"); r.status != 401 {
		t.Fatalf("GET with the expired token: %d, want 401", r.status)
	}
	tok := mustDo(t, http.MethodPut, s.URL()+"/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds", "60").body
	if tok == imdstest.Token {
		t.Fatal("PUT after expiry handed out the expired token")
	}
	if r := mustDo(t, http.MethodGet, s.URL()+typePath, "X-aws-ec2-metadata-token", tok); r.status != 200 || r.body != "m5.large" {
		t.Errorf("GET with the new token: %d %q, want 200 m5.large", r.status, r.body)
	}
	s.ExpireTokens()
	if r := mustDo(t, http.MethodGet, s.URL()+typePath, "X-aws-ec2-metadata-token", tok); r.status != 401 {
		t.Errorf("GET after ExpireTokens: %d, want 401", r.status)
	}
}

func TestTokenPathFaults(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	s.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403, Times: 1},
		imdstest.Fault{Kind: imdstest.FaultBody, Body: "", Times: 1})
	for _, want := range []struct {
		status int
		body   string
	}{{403, "403 - Forbidden"}, {200, ""}, {200, imdstest.Token}} {
		r := mustDo(t, http.MethodPut, s.URL()+"/latest/api/token", "X-aws-ec2-metadata-token-ttl-seconds", "60")
		if r.status != want.status || !strings.Contains(r.body, want.body) || (want.body == "" && r.body != "") {
			t.Errorf("PUT: %d %q, want %d %q", r.status, r.body, want.status, want.body)
		}
	}
}

func TestSetFaultsClears(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	s.SetFaults(typePath, imdstest.Fault{Kind: imdstest.FaultStatus, Status: 500})
	s.SetFaults(typePath)
	if r := get(t, s, typePath); r.status != 200 {
		t.Errorf("GET after clearing: %d, want 200", r.status)
	}
}

func TestIMDSv1(t *testing.T) {
	s := startServer(t, imdstest.DefaultInstance())
	if r := mustDo(t, http.MethodGet, s.URL()+typePath); r.status != 401 {
		t.Errorf("GET without a token: %d, want 401", r.status)
	}
	s.SetIMDSv1(true)
	if r := mustDo(t, http.MethodGet, s.URL()+typePath); r.status != 200 || r.body != "m5.large" {
		t.Errorf("GET without a token, IMDSv1 on: %d %q, want 200 m5.large", r.status, r.body)
	}
	if r := mustDo(t, http.MethodGet, s.URL()+typePath, "X-aws-ec2-metadata-token", "stale"); r.status != 401 {
		t.Errorf("GET with a wrong token, IMDSv1 on: %d, want 401", r.status)
	}
}
