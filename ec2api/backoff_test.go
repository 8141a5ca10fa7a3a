package ec2api

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/ec2api/ec2test"
)

// TestThrottleDelay checks the spans of the waits after throttling (values, not
// timings): the first retry within [0, w), the second within [w, 3w), the third
// within [3w, 9w).
func TestThrottleDelay(t *testing.T) {
	const w = time.Second
	for range 1000 {
		if d := ThrottleDelay(1, w); d < 0 || d >= w {
			t.Fatalf("retry 1: %v, want within [0, %v)", d, w)
		}
		if d := ThrottleDelay(2, w); d < w || d >= 3*w {
			t.Fatalf("retry 2: %v, want within [%v, %v)", d, w, 3*w)
		}
		if d := ThrottleDelay(3, w); d < 3*w || d >= 9*w {
			t.Fatalf("retry 3: %v, want within [%v, %v)", d, 3*w, 9*w)
		}
	}
}

// TestThrottleRetryerDelays checks that throttle errors get ThrottleDelay and other
// errors the SDK's own (short) delay.
func TestThrottleRetryerDelays(t *testing.T) {
	const w = time.Hour
	r := throttleRetryer{Retryer: retry.NewStandard(), window: w}
	for _, code := range []string{"RequestLimitExceeded", "Throttling"} {
		d, err := r.RetryDelay(2, &smithy.GenericAPIError{Code: code})
		if err != nil || d < w || d >= 3*w {
			t.Errorf("%s, retry 2: %v, %v; want within [%v, %v)", code, d, err, w, 3*w)
		}
	}
	d, err := r.RetryDelay(2, &smithy.GenericAPIError{Code: "Unavailable"})
	if err != nil || d >= time.Minute {
		t.Errorf("Unavailable, retry 2: %v, %v; want the SDK's delay, under a minute", d, err)
	}
	if _, err := r.GetAttemptToken(context.Background()); err != nil {
		t.Errorf("GetAttemptToken: %v", err)
	}
}

// TestThrottledCallAttempts runs DescribeInstanceTypes against a fake EC2 that lets
// one request through per hour: the next call is tried MaxAttempts times, no more,
// and fails naming RequestLimitExceeded.
func TestThrottledCallAttempts(t *testing.T) {
	srv, _ := newFake(t)
	cfg, err := LoadConfig("us-west-2", "")
	if err != nil {
		t.Fatal(err)
	}
	c := New(cfg, WithThrottleBackoff(time.Millisecond))
	srv.Update(func(a *ec2test.Answers) {
		a.RateLimits["DescribeInstanceTypes"] = ec2test.RateLimit{N: 1, Interval: time.Hour}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.InstanceTypeInfo(ctx, "m5.large"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	_, err = c.InstanceTypeInfo(ctx, "m5.large")
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "RequestLimitExceeded" {
		t.Errorf("throttled call: %v; want RequestLimitExceeded", err)
	}
	if got := srv.Calls("DescribeInstanceTypes"); got != 1+MaxAttempts {
		t.Errorf("DescribeInstanceTypes asked %d times, want %d", got, 1+MaxAttempts)
	}
	var got int
	srv.Update(func(a *ec2test.Answers) { got = a.Throttled["DescribeInstanceTypes"] })
	if got != MaxAttempts {
		t.Errorf("throttled %d times, want %d", got, MaxAttempts)
	}
}

// TestThrottleDelayWithin checks the spans of the waits budgeted against a
// deadline (values, not timings): of what is left less the last attempt's room,
// an earlier retry within the first half, the last within the second.
func TestThrottleDelayWithin(t *testing.T) {
	const left = 90 * time.Second
	usable := left - attemptRoom
	for range 1000 {
		if d := ThrottleDelayWithin(1, 3, left); d < 0 || d >= usable/2 {
			t.Fatalf("retry 1 of 2: %v, want within [0, %v)", d, usable/2)
		}
		if d := ThrottleDelayWithin(2, 3, left); d < usable/2 || d >= usable {
			t.Fatalf("retry 2 of 2: %v, want within [%v, %v)", d, usable/2, usable)
		}
		if d := ThrottleDelayWithin(2, 3, 10*time.Second); d < 4*time.Second || d >= 8*time.Second {
			t.Fatalf("retry 2 of 2, 10 s left: %v, want within [4s, 8s) (the room is a fifth of what is left)", d)
		}
	}
	if d := ThrottleDelayWithin(1, 3, 0); d != 0 {
		t.Errorf("no time left: %v, want no wait", d)
	}
}

// TestThrottledCallKeepsToItsDeadline: a call EC2 throttles at every attempt,
// under a deadline of 6 s, makes its MaxAttempts attempts within it and fails with
// EC2's RequestLimitExceeded, not with the deadline: its waits are budgeted
// against the deadline, the last attempt given room before it.
func TestThrottledCallKeepsToItsDeadline(t *testing.T) {
	srv, c := newFake(t)
	srv.Update(func(a *ec2test.Answers) {
		a.RateLimits["DescribeInstanceTypes"] = ec2test.RateLimit{N: 1, Interval: time.Hour}
	})
	if _, err := c.InstanceTypeInfo(context.Background(), "m5.large"); err != nil {
		t.Fatalf("first call: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Second)
	defer cancel()
	_, err := c.InstanceTypeInfo(ctx, "m5.large")
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) || apiErr.ErrorCode() != "RequestLimitExceeded" || ctx.Err() != nil {
		t.Errorf("throttled call: %v (context: %v); want RequestLimitExceeded before the deadline", err, ctx.Err())
	}
	if got := srv.Calls("DescribeInstanceTypes"); got != 1+MaxAttempts {
		t.Errorf("DescribeInstanceTypes asked %d times, want %d", got, 1+MaxAttempts)
	}
}
