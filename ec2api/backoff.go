package ec2api

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
)

// ThrottleWindow spaces the retries of a throttled call (see ThrottleDelay). With
// MaxAttempts = 3 a throttled call is retried within [0, 20s) and then within
// [20s, 60s) of that, so a herd of nodes asking at once is spread over more than a
// minute: 2,000 nodes fit under 50 requests per second (docs/performance.md).
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

// WithThrottleBackoff makes a Client wait ThrottleDelay(n, window) before retry n
// of a throttled call (RequestLimitExceeded, Throttling, HTTP 429); other retryable
// errors keep the retryer's short exponential backoff, and the number of attempts is
// the retryer's (MaxAttempts with LoadConfig). New applies it with ThrottleWindow;
// window <= 0 leaves the retryer's own delays (the SDK's, a second or two).
func WithThrottleBackoff(window time.Duration) Option {
	return func(c *Client) { c.window = window }
}

// throttleRetryer is a retryer whose delays after throttling are ThrottleDelay's.
type throttleRetryer struct {
	aws.Retryer
	window time.Duration
}

var throttles = retry.IsErrorThrottles(retry.DefaultThrottles)

// RetryDelay returns ThrottleDelay after a throttle error, else the inner delay.
func (r throttleRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	if throttles.IsErrorThrottle(err) == aws.TrueTernary {
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
