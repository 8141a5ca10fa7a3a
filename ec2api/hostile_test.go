package ec2api

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// hostile starts a server on 127.0.0.1 that answers every request with status and
// body, and a Client for it whose retries do not wait; it returns the Client and
// the count of requests.
func hostile(t *testing.T, status int, body string) (*Client, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	hermeticEnv(t, srv.URL)
	cfg, err := LoadConfig("us-west-2", "")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Retryer = func() aws.Retryer {
		return retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = MaxAttempts
			o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	}
	return New(cfg, WithThrottleBackoff(time.Millisecond)), &n
}

const instanceID = "i-0123456789abcdef0"

// TestHostileAnswers: answers EC2 does not give are errors naming what is wrong,
// retried only when the retryer would retry the SDK client's error (5xx, throttling).
func TestHostileAnswers(t *testing.T) {
	item := func(inner string) string {
		return `<DescribeInstancesResponse><reservationSet><item><instancesSet><item>` + inner +
			`</item></instancesSet></item></reservationSet></DescribeInstancesResponse>`
	}
	tests := []struct {
		name    string
		status  int
		body    string
		want    string // in the error
		wantIs  error
		calls   int32
		wantAPI bool // an APIError
	}{
		{"oversized", 200, "<a>" + strings.Repeat("x", 2<<20) + "</a>", "larger than 1048576 bytes", nil, 1, false},
		{"oversized error", 500, strings.Repeat("x", 2<<20), "larger than 1048576 bytes", nil, 1, false},
		{"malformed", 200, "<DescribeInstancesResponse><reservationSet>", "not well-formed XML", nil, 1, false},
		{"not XML", 200, `{"reservations": []}`, "not well-formed XML", nil, 1, false},
		{"another answer", 200, "<DescribeInstanceTypesResponse/>", `the answer is a DescribeInstanceTypesResponse, want a DescribeInstancesResponse`, nil, 1, false},
		{"crossed nesting", 200, "<DescribeInstancesResponse><reservationSet><item></reservationSet></item></DescribeInstancesResponse>", "end tag reservationSet closes item", nil, 1, false},
		{
			"instances outside a reservation item", 200,
			`<DescribeInstancesResponse><reservationSet><instancesSet><item><instanceId>` + instanceID + `</instanceId><privateDnsName>x</privateDnsName></item></instancesSet></reservationSet></DescribeInstancesResponse>`,
			"instance not in the answer", ErrEmptyDNSName, 1, false,
		},
		{
			"another instance", 200, item(`<instanceId>i-0aaaaaaaaaaaaaaaa</instanceId><privateDnsName>ip-10-0-0-9.us-west-2.compute.internal</privateDnsName>`),
			"describe instance " + instanceID + ": an answer EC2 does not give: instance i-0aaaaaaaaaaaaaaaa, want " + instanceID, ErrBadAnswer, 1, false,
		},
		{
			"two instances, this one first", 200,
			`<DescribeInstancesResponse><reservationSet><item><instancesSet><item><instanceId>` + instanceID + `</instanceId><privateDnsName>ip-10-0-1-23.us-west-2.compute.internal</privateDnsName></item>` +
				`<item><instanceId>i-0aaaaaaaaaaaaaaaa</instanceId><privateDnsName>ip-10-0-0-9.us-west-2.compute.internal</privateDnsName></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
			"an answer EC2 does not give: more than one instance (" + instanceID + ", i-0aaaaaaaaaaaaaaaa)", ErrBadAnswer, 1, false,
		},
		{
			"this one twice, in two reservations", 200,
			`<DescribeInstancesResponse><reservationSet><item><instancesSet><item><instanceId>` + instanceID + `</instanceId><privateDnsName>ip-10-0-1-23.us-west-2.compute.internal</privateDnsName></item></instancesSet></item>` +
				`<item><instancesSet><item><instanceId>` + instanceID + `</instanceId><privateDnsName>evil.example.com</privateDnsName></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
			"more than one instance", ErrBadAnswer, 1, false,
		},
		{"two names", 200, item(`<instanceId>` + instanceID + `</instanceId><privateDnsName>a</privateDnsName><privateDnsName>b</privateDnsName>`), "two privateDnsName elements in item", nil, 1, false},
		{"a name with elements", 200, item(`<instanceId>` + instanceID + `</instanceId><privateDnsName><b>a</b></privateDnsName>`), "privateDnsName in item has elements inside", nil, 1, false},
		{"entity expansion", 200, `<!DOCTYPE a [<!ENTITY e "x">]>` + item(`<instanceId>&e;</instanceId>`), "a DOCTYPE", nil, 1, false},
		{"deep", 200, strings.Repeat("<a>", 1000) + strings.Repeat("</a>", 1000), "nested deeper than 32", nil, 1, false},
		{"a proxy's page", 502, "<html><body>Bad Gateway</body></html>", "HTTP 502 without an EC2 error code", nil, MaxAttempts, false},
		{"an error without a code", 400, "<Response><Errors><Error><Message>no</Message></Error></Errors></Response>", "HTTP 400 without an EC2 error code", nil, 1, false},
		{"a server error", 503, "<Response><Errors><Error><Code>Unavailable</Code><Message>try later</Message></Error></Errors><RequestID>r-1</RequestID></Response>", "HTTP 503, Unavailable: try later (request r-1)", nil, MaxAttempts, true},
		{"a control character in the message", 400, "<Response><Errors><Error><Code>Bad</Code><Message>a&#10;b</Message></Error></Errors></Response>", `HTTP 400, Bad: "a\nb"`, nil, 1, true},
		{"a character XML does not allow", 400, "<Response><Errors><Error><Code>Bad</Code><Message>a&#27;[31mred</Message></Error></Errors></Response>", "HTTP 400 without an EC2 error code", nil, 1, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, n := hostile(t, tc.status, tc.body)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			name, err := c.PrivateDNSName(ctx, instanceID)
			t.Logf("error: %v", err)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("PrivateDNSName = %q, %v; want an error containing %q", name, err, tc.want)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error does not wrap %v", tc.wantIs)
			}
			var apiErr *APIError
			if got := errors.As(err, &apiErr); got != tc.wantAPI {
				t.Errorf("errors.As(APIError) = %t, want %t", got, tc.wantAPI)
			}
			if got := n.Load(); got != tc.calls {
				t.Errorf("%d requests, want %d", got, tc.calls)
			}
			if len(err.Error()) > 400 {
				t.Errorf("error is %d bytes long, want one short line", len(err.Error()))
			}
		})
	}
}

// TestRedirectIsNotFollowed: a redirect is an error, not retried, and the other
// host is never asked.
func TestRedirectIsNotFollowed(t *testing.T) {
	var leaked atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { leaked.Add(1) }))
	t.Cleanup(other.Close)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, other.URL+"/", http.StatusTemporaryRedirect)
	}))
	t.Cleanup(srv.Close)
	hermeticEnv(t, srv.URL)
	cfg, err := LoadConfig("us-west-2", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg).PrivateDNSName(context.Background(), instanceID)
	if err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Errorf("PrivateDNSName: %v; want an error naming the redirect", err)
	}
	if n.Load() != 1 || leaked.Load() != 0 {
		t.Errorf("%d requests, %d to the other host; want 1 and 0", n.Load(), leaked.Load())
	}
}

// TestALargeAnswerCostsItsLimit: an answer of 64 MiB, streamed (the server never
// holds it), fails at the 1 MiB limit having cost a few MiB of memory, not the
// answer's size: the body is read through the limit, not whole and then measured.
func TestALargeAnswerCostsItsLimit(t *testing.T) {
	const size = 64 << 20
	for _, status := range []int{200, 500} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			var sent atomic.Int64
			head, xs := []byte("<a>"), []byte(strings.Repeat("x", 32<<10)) // made once: the server allocates nothing as it sends
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(status)
				_, _ = w.Write(head)
				for sent.Load() < size {
					n, err := w.Write(xs)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}))
			t.Cleanup(srv.Close)
			hermeticEnv(t, srv.URL)
			cfg, err := LoadConfig("us-west-2", "")
			if err != nil {
				t.Fatal(err)
			}
			c := New(cfg)
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = c.PrivateDNSName(context.Background(), instanceID)
			runtime.ReadMemStats(&after)
			if err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
				t.Fatalf("PrivateDNSName: %v; want the 1 MiB limit named", err)
			}
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
				t.Errorf("the call allocated %d MiB for a %d MiB answer; want a few MiB, the limit's", alloc>>20, size>>20)
			}
			t.Logf("%d MiB sent before the client hung up, %.1f MiB allocated; %v", sent.Load()>>20, float64(after.TotalAlloc-before.TotalAlloc)/(1<<20), err)
		})
	}
}
