package imds_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// IMDS is an interface, not an oracle: these tests play a service (or something
// in front of it) that answers too much, redirects, leaks and lies.

// large is an answer of n bytes of "x", streamed by the fake.
func large(n int64) imdstest.Fault { return imdstest.Fault{Kind: imdstest.FaultLarge, Size: n} }

// TestFetchReadsEachAnswerThroughALimit: an answer larger than its limit fails the
// Fetch naming the path and the limit, and costs no more memory than the limit:
// the SDK reads whole bodies itself, so the limit is on the wire, not after it.
func TestFetchReadsEachAnswerThroughALimit(t *testing.T) {
	tests := []struct {
		name   string
		absent string // a key the identity document lacks, so its path is read
		path   string
		size   int64
		limit  string // "" when the answer is within its limit
	}{
		{"user data of 50 MB", "", imds.PathUserData, 50 << 20, "131072"},
		{"user data one byte over 128 KiB", "", imds.PathUserData, 128<<10 + 1, "131072"},
		{"user data of exactly 128 KiB", "", imds.PathUserData, 128 << 10, ""},
		{"identity document of 50 MB", "", imds.PathIdentityDocument, 50 << 20, "32768"},
		{"instance type of 20 KiB", "instanceType", imds.PathInstanceType, 20 << 10, "16384"},
		{"local-hostname of 50 MB", "", imds.PathLocalHostname, 50 << 20, "16384"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			inst.UserData = "#!/bin/bash\n"
			if tt.absent != "" {
				inst.Overrides = map[string]*string{imds.PathIdentityDocument: withoutKeys(tt.absent)}
			}
			s := startFake(t, inst)
			s.SetFaults(tt.path, large(tt.size))
			opts := fast(s, 30*time.Second)
			opts.UserData = true
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			f, err := imds.Fetch(context.Background(), opts)
			runtime.ReadMemStats(&after)
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("Fetch allocated %d MB for a %d-byte answer, want under 8 MB", alloc>>20, tt.size)
			}
			if tt.limit == "" {
				if err != nil {
					t.Fatalf("Fetch: %v", err)
				}
				if int64(len(f.UserData)) != tt.size {
					t.Errorf("user data of %d bytes, want %d", len(f.UserData), tt.size)
				}
				return
			}
			if err == nil {
				t.Fatalf("Fetch = %+v, want an error", f)
			}
			msg := err.Error()
			for _, w := range []string{"imds: " + tt.path + ": ", "larger than the " + tt.limit + "-byte limit"} {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not say %q", msg, w)
				}
			}
			var pe *imds.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path || pe.Attempts != 1 {
				t.Errorf("error %q: want a *PathError for %s after 1 attempt (too large is not a glitch)", msg, tt.path)
			}
		})
	}
}

// TestFetchFollowsNoRedirect: a redirect is an error naming the path, and the
// other host never sees a request (so never the session token).
func TestFetchFollowsNoRedirect(t *testing.T) {
	for _, path := range []string{imds.PathIdentityDocument, imds.PathMAC, tokenPath, imds.PathUserData} {
		for _, code := range []int{301, 302, 307, 308} {
			t.Run(path+"/"+http3xx(code), func(t *testing.T) {
				s := startFake(t, imdstest.DefaultInstance())
				other := startFake(t, imdstest.DefaultInstance()) // another host: same token, same answers
				s.SetFaults(path, imdstest.Fault{Kind: imdstest.FaultRedirect, Status: code, Location: other.URL() + "/" + path})
				opts := fast(s, 30*time.Second)
				opts.UserData = true
				f, err := imds.Fetch(context.Background(), opts)
				if n := len(other.Requests()); n != 0 {
					t.Errorf("the other host got %d requests (%+v), want none", n, other.Requests())
				}
				wantPath := path
				if path == tokenPath {
					wantPath = imds.PathIdentityDocument // the token is asked for the first path
				}
				if err == nil {
					t.Fatalf("Fetch = %+v, want an error", f)
				}
				msg := err.Error()
				for _, w := range []string{"imds: " + wantPath + ": ", "redirect", "IMDS answers directly"} {
					if !strings.Contains(msg, w) {
						t.Errorf("error %q does not say %q", msg, w)
					}
				}
				var pe *imds.PathError
				if !errors.As(err, &pe) || pe.Attempts != 1 {
					t.Errorf("error %q: want a *PathError after 1 attempt", msg)
				}
			})
		}
	}
}

func http3xx(code int) string {
	return map[int]string{301: "301", 302: "302", 307: "307", 308: "308"}[code]
}

// TestFetchErrorsNeverQuoteTheToken: whatever the token endpoint answers, no
// error repeats it (it may be a real token with a stray byte).
func TestFetchErrorsNeverQuoteTheToken(t *testing.T) {
	const secret = "AQAEAsecretsecretsecret"
	for name, answer := range map[string]string{
		"two words":     secret + " " + secret,
		"two lines":     secret + "\n" + secret,
		"unprintable":   secret + "\x00",
		"HTML":          "<html>" + secret + "</html>",
		"over the size": strings.Repeat(secret, 400),
	} {
		t.Run(name, func(t *testing.T) {
			s := startFake(t, imdstest.DefaultInstance())
			s.SetFaults(tokenPath, body(answer))
			f, err := imds.Fetch(context.Background(), fast(s, 30*time.Second))
			if err == nil {
				t.Fatalf("Fetch = %+v, want an error", f)
			}
			msg := err.Error()
			if strings.Contains(msg, "AQAE") || strings.Contains(msg, "secret") {
				t.Errorf("error %q quotes the token endpoint's answer", msg)
			}
			if !strings.Contains(msg, "not a token") {
				t.Errorf("error %q does not say the answer is not a token", msg)
			}
		})
	}
}

// TestAnEchoOfThePlainTokenIsScrubbed: a service (here a proxy in front of the
// fake) whose session token is plain words, with no token's shape, and which
// echoes it in the host name, as a second name (a warning quotes it) and as one
// that is not a host name (the error quotes it): neither shows any of it, because
// the client holds each token it accepts for a secret of the process
// (scrub.Process), which every excerpt of an answer is scrubbed of.
func TestAnEchoOfThePlainTokenIsScrubbed(t *testing.T) {
	const plain = "plain-session-words-of-a-token"
	for _, tc := range []struct {
		name     string
		hostname func(tok string) string
	}{
		{"a second name", func(tok string) string { return "ip-10-0-0-1.ec2.internal " + tok }},
		{"not a host name", func(tok string) string { return tok + "!" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := startFake(t, imdstest.DefaultInstance())
			target, err := url.Parse(fake.URL())
			if err != nil {
				t.Fatal(err)
			}
			forward := httputil.NewSingleHostReverseProxy(target)
			proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case r.Method == http.MethodPut:
					w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "300")
					_, _ = io.WriteString(w, plain)
				case r.URL.Path == "/"+imds.PathLocalHostname:
					_, _ = io.WriteString(w, tc.hostname(r.Header.Get("X-Aws-Ec2-Metadata-Token")))
				default:
					r.Header.Set("X-Aws-Ec2-Metadata-Token", imdstest.Token) // the fake's own
					forward.ServeHTTP(w, r)
				}
			}))
			t.Cleanup(proxy.Close)
			opts := imds.Options{Endpoint: proxy.URL, Timeout: 5 * time.Second, AttemptTimeout: 2 * time.Second, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}
			f, err := imds.Fetch(context.Background(), opts)
			text := fmt.Sprint(err)
			if f != nil {
				text += strings.Join(f.Warnings, "\n")
			}
			if !strings.Contains(text, "(redacted)") || strings.Contains(text, plain[:12]) {
				t.Errorf("Fetch quoted the host name without the token redacted: %s", text)
			}
		})
	}
}
