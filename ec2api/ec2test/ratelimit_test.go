package ec2test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestRateLimit lets three DescribeInstanceTypes through in an hour (so no token
// comes back during the test) and checks that the fourth is refused as EC2 refuses
// requests over an account's rate, that other actions are not limited, that the
// error can be changed and that n = 0 lifts the limit.
func TestRateLimit(t *testing.T) {
	s := newServer(t)
	types := url.Values{"Action": {"DescribeInstanceTypes"}, "InstanceType.1": {"m5.large"}}
	inst := url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {"i-1"}}
	s.Update(func(a *Answers) { a.RateLimits["DescribeInstanceTypes"] = RateLimit{N: 3, Interval: time.Hour} })
	for i := range 3 {
		if status, body := do(t, s, "", "", types); status != http.StatusOK {
			t.Fatalf("request %d within the rate: %d %s", i+1, status, body)
		}
	}
	status, body := do(t, s, "", "", types)
	if status != http.StatusServiceUnavailable || !strings.Contains(body, "<Code>RequestLimitExceeded</Code>") {
		t.Errorf("over the rate: %d %s; want 503 RequestLimitExceeded", status, body)
	}
	if status, body := do(t, s, "", "", inst); status != http.StatusOK {
		t.Errorf("another action is limited: %d %s", status, body)
	}
	s.Update(func(a *Answers) {
		a.RateLimits["DescribeInstanceTypes"] = RateLimit{N: 1, Interval: time.Hour, Status: http.StatusBadRequest, Code: "Throttling"}
	})
	do(t, s, "", "", types)
	status, body = do(t, s, "", "", types)
	if status != http.StatusBadRequest || !strings.Contains(body, "<Code>Throttling</Code>") {
		t.Errorf("over the rate with Throttling: %d %s; want 400 Throttling", status, body)
	}
	s.Update(func(a *Answers) { delete(a.RateLimits, "DescribeInstanceTypes") })
	if status, body := do(t, s, "", "", types); status != http.StatusOK {
		t.Errorf("after the limit was lifted: %d %s", status, body)
	}
	var got int
	s.Update(func(a *Answers) { got = a.Throttled["DescribeInstanceTypes"] })
	if got != 2 {
		t.Errorf("Throttled[DescribeInstanceTypes] = %d, want 2", got)
	}
	if got := s.Calls("DescribeInstanceTypes"); got != 7 {
		t.Errorf("Calls(DescribeInstanceTypes) = %d, want 7 (throttled requests count)", got)
	}
}
