package ec2api

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// ThrottleWindow spaces the retries of a throttled call that has no deadline (see
// ThrottleDelay; with one, ThrottleDelayWithin). With MaxAttempts = 3 such a call is
// retried within [0, 20s) and then within [20s, 60s) of that, so a herd of nodes
// asking at once is spread over more than a minute (docs/performance.md).
const ThrottleWindow = 20 * time.Second

// ThrottleDelay returns the wait before retry n (1 for the first) of a call EC2
// throttled: uniform in [0, window) for the first, so that the nodes throttled
// together come back spread out, and uniform in [window*3^(n-2), window*3^(n-1))
// after that, so that the ones throttled again come back after that first wave,
// spread over a wider span. The SDK's own delays (a second or two) bring a
// throttled herd back at once, to be throttled again, until its nodes run out of
// attempts.
func ThrottleDelay(n int, window time.Duration) time.Duration {
	if n <= 1 {
		return time.Duration(rand.Int64N(int64(window)))
	}
	lo := window
	for range n - 2 {
		lo *= 3
	}
	return lo + time.Duration(rand.Int64N(int64(2*lo)))
}

// ThrottleDelayWithin returns the wait before retry n (1 for the first) of a call
// EC2 throttled, of attempts in all, when the call's deadline leaves left: the
// retries are budgeted against the deadline instead of fixed windows. Of usable,
// left less the room the last attempt needs (attemptRoom, at most a fifth of
// left), an earlier retry waits a uniform part of the first half, so that the
// nodes throttled together come back spread as widely as the deadline allows,
// and the last retry a uniform part of the second half, after that wave, when the
// herd has thinned. On a fleet booting at once the first calls arrive spread over
// however long the nodes take to get to them, longer on busy machines; fixed
// windows tuned to one spread ([0, 20 s) then [20 s, 60 s)) let a node's last
// attempt meet first calls still coming in (docs/performance.md).
func ThrottleDelayWithin(n, attempts int, left time.Duration) time.Duration {
	usable := left - min(attemptRoom, left/5)
	if usable <= 1 {
		return 0
	}
	half := usable / 2
	if n >= attempts-1 {
		return half + time.Duration(rand.Int64N(int64(usable-half)))
	}
	return time.Duration(rand.Int64N(int64(half)))
}

// attemptRoom is the time an attempt after the last wait is given before the
// deadline: an answer, even a throttled one, comes back within a second or two.
const attemptRoom = 5 * time.Second

// WithThrottleBackoff makes a Client wait ThrottleDelay(n, window) before retry n
// of a throttled call (RequestLimitExceeded, Throttling, HTTP 429), whatever the
// call's deadline; window <= 0 leaves the retryer's own delays (the SDK's, a second
// or two). Other retryable errors keep the retryer's short exponential backoff,
// and the number of attempts is the retryer's (MaxAttempts with LoadConfig).
//
// Without it, New's Client waits ThrottleDelayWithin the call's deadline when its
// context has one (bootstrap gives DescribeInstanceTypes 90 s), else
// ThrottleDelay(n, ThrottleWindow).
func WithThrottleBackoff(window time.Duration) Option {
	return func(c *Client) { c.window, c.budget = window, false }
}

// withDeadlineBudget makes a Client wait ThrottleDelayWithin the deadline of a
// throttled call that has one (New's default, after WithThrottleBackoff's windows).
func withDeadlineBudget(c *Client) { c.budget = true }

// throttleRetryer is a retryer whose delays after throttling are ThrottleDelay's.
type throttleRetryer struct {
	aws.Retryer
	window time.Duration
}

var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// isThrottle reports whether err is EC2 throttling the call.
func isThrottle(err error) bool { return throttles.IsErrorThrottle(err) == aws.TrueTernary }

// RetryDelay returns ThrottleDelay after a throttle error, else the inner delay.
func (r throttleRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	if isThrottle(err) {
		return ThrottleDelay(attempt, r.window), nil
	}
	return r.Retryer.RetryDelay(attempt, err)
}

// GetAttemptToken is the inner retryer's (aws.RetryerV2), or its initial token.
func (r throttleRetryer) GetAttemptToken(ctx context.Context) (func(error) error, error) {
	if v2, ok := r.Retryer.(aws.RetryerV2); ok {
		return v2.GetAttemptToken(ctx)
	}
	return r.GetInitialToken(), nil
}
