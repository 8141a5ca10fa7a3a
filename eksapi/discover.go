package eksapi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/internal/quote"
)

// Default waits of a Policy.
const (
	DefaultBase        = 10 * time.Second
	DefaultMax         = 2 * time.Minute
	DefaultPoll        = 30 * time.Second
	DefaultCallTimeout = 30 * time.Second
)

// Policy says how Discover retries and waits. Zero durations take the defaults above.
type Policy struct {
	// Retries is how many failed calls in a row are retried (bootstrap.sh's
	// --aws-api-retry-attempts); 0 means the first failure is final. An answer saying
	// the cluster is not ACTIVE yet is not a failure and starts the count afresh.
	Retries int
	// Base and Max shape the backoff: retry k waits a random time in [b, 2b) with
	// b = min(Base·2^(k-1), Max). With the defaults that is 10-20s, 20-40s, 40-80s...
	// (bootstrap.sh waited 11-20s, 21-30s, 41-50s).
	Base, Max time.Duration
	// Poll spaces the calls while the cluster is CREATING, UPDATING or PENDING: a
	// random time in [Poll/2, 3·Poll/2). The default is the 30s of
	// `aws eks wait cluster-active`.
	Poll time.Duration
	// CallTimeout bounds each call, so a hung connection costs one attempt, not the
	// whole deadline.
	CallTimeout time.Duration
	// OnWait, when set, is told about every pause before it starts.
	OnWait func(Wait)
	// Rand returns a number in [0, 1); the default is math/rand/v2's Float64.
	Rand func() float64
	// Sleep pauses for d or until ctx ends; the default uses a timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Wait describes one pause of Discover.
type Wait struct {
	// Calls is the number of calls made so far.
	Calls int
	// Delay is how long the pause lasts.
	Delay time.Duration
	// Status is the cluster's status when waiting for it to become ACTIVE.
	Status string
	// Retry is the number of the retry the pause leads to (1 for the first), 0 when
	// waiting for the status.
	Retry int
	// Err is the failure being retried, nil when waiting for the status.
	Err error
}

// Reason says why Discover gave up.
type Reason string

// The reasons Discover gives up.
const (
	// ReasonRefused: EKS answered with an error that retrying cannot fix.
	ReasonRefused Reason = "refused"
	// ReasonBudget: more failures in a row than Policy.Retries allows.
	ReasonBudget Reason = "retries spent"
	// ReasonDeadline: ctx ended (or would end before the next call).
	ReasonDeadline Reason = "deadline"
	// ReasonStatus: the cluster is in a status it cannot leave for ACTIVE.
	ReasonStatus Reason = "status"
)

// Error is a failed discovery. errors.As finds the last API error through it.
type Error struct {
	// Name is the cluster name.
	Name string
	// Reason says why discovery stopped.
	Reason Reason
	// Calls is the number of calls made.
	Calls int
	// Code is the EKS error code of the last failure, e.g. AccessDeniedException;
	// empty when the failure was not an EKS error (network, timeout, credentials).
	Code string
	// Status is the cluster's last status seen, if any.
	Status string
	// Err is the last failure, nil for ReasonStatus or a deadline met while waiting.
	Err error
}

func (e *Error) Error() string {
	var what string
	switch e.Reason {
	case ReasonStatus:
		what = fmt.Sprintf("the cluster is %s", e.Status)
	case ReasonDeadline:
		what = "no answer with an ACTIVE cluster before the deadline"
	case ReasonBudget:
		what = "gave up: every retry failed"
	default:
		what = "refused"
	}
	s := fmt.Sprintf("eks:DescribeCluster %s: %s (%d %s", quote.Name(e.Name), what, e.Calls, plural(e.Calls, "call"))
	switch {
	case e.Err != nil:
		s += "; last error: " + describe(e.Err)
	case e.Status != "" && e.Reason != ReasonStatus:
		s += "; last status: " + e.Status
	}
	return s + ")"
}

// Unwrap returns the last failure.
func (e *Error) Unwrap() error { return e.Err }

// Discover calls DescribeCluster until the cluster is ACTIVE (or UPDATING, which
// keeps serving) with an endpoint and a CA, and returns it with the number of calls
// made. It waits while the cluster is CREATING or PENDING (or UPDATING without an
// endpoint or CA yet); retries throttling, server errors, timeouts and
// network failures with jittered exponential backoff, up to p.Retries in a row; and
// stops at once on any other EKS error. ctx bounds the whole discovery. Every failure
// is an *Error.
func Discover(ctx context.Context, api API, name string, p Policy) (*Cluster, int, error) {
	p = p.withDefaults()
	calls, failures := 0, 0
	var status string
	for {
		cctx, cancel := context.WithTimeout(ctx, p.CallTimeout)
		c, err := api.DescribeCluster(cctx, name)
		cancel()
		calls++
		fail := func(r Reason, err error) (*Cluster, int, error) {
			return nil, calls, &Error{Name: name, Reason: r, Calls: calls, Code: Code(err), Status: status, Err: err}
		}
		w := Wait{Calls: calls}
		switch {
		case err != nil && ctx.Err() != nil:
			return fail(ReasonDeadline, err)
		case err != nil && !Retryable(err):
			return fail(ReasonRefused, err)
		case err != nil:
			failures++
			if failures > p.Retries {
				return fail(ReasonBudget, err)
			}
			w.Retry, w.Err, w.Delay = failures, err, p.backoff(failures)
		default:
			status = c.Status
			switch c.Status {
			case StatusActive:
				if c.Endpoint == "" || c.CAData == "" {
					return fail(ReasonRefused, errors.New("the cluster is ACTIVE but the answer lacks its endpoint or CA"))
				}
				return c, calls, nil
			case StatusUpdating:
				// An update (a version upgrade, a config change) keeps the API server
				// serving, and can outlast any reasonable wait: an answer with an
				// endpoint and a CA is good to join with.
				if c.Endpoint != "" && c.CAData != "" {
					return c, calls, nil
				}
				failures = 0
				w.Status, w.Delay = c.Status, p.jitter(p.Poll/2, p.Poll)
			case StatusCreating, StatusPending:
				failures = 0
				w.Status, w.Delay = c.Status, p.jitter(p.Poll/2, p.Poll)
			default:
				return fail(ReasonStatus, nil)
			}
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < w.Delay {
			return fail(ReasonDeadline, w.Err)
		}
		if p.OnWait != nil {
			p.OnWait(w)
		}
		if err := p.Sleep(ctx, w.Delay); err != nil {
			return fail(ReasonDeadline, w.Err)
		}
	}
}

// withDefaults fills the zero fields of p.
func (p Policy) withDefaults() Policy {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&p.Base, DefaultBase)
	def(&p.Max, DefaultMax)
	def(&p.Poll, DefaultPoll)
	def(&p.CallTimeout, DefaultCallTimeout)
	if p.Rand == nil {
		p.Rand = rand.Float64
	}
	if p.Sleep == nil {
		p.Sleep = sleep
	}
	return p
}

// backoff is the pause before retry k (1-based): a random time in [b, 2b) with
// b = min(Base·2^(k-1), Max).
func (p Policy) backoff(k int) time.Duration {
	b := p.Base
	for i := 1; i < k && b < p.Max; i++ {
		b *= 2
	}
	b = min(b, p.Max)
	return p.jitter(b, b)
}

// jitter returns lo plus a random part of span.
func (p Policy) jitter(lo, span time.Duration) time.Duration {
	return lo + time.Duration(p.Rand()*float64(span))
}

// sleep pauses for d, or until ctx ends (then it returns ctx's error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Retryable reports whether a failed call may succeed if made again: throttling,
// EKS server errors (HTTP 429 and 5xx), and anything that is not an EKS answer
// (network failures, timeouts, credentials not available yet), unless the error
// says it is final (RetryableError() false: a refused redirect). Other EKS
// errors, such as AccessDeniedException or ResourceNotFoundException, are final.
func Retryable(err error) bool {
	var final interface{ RetryableError() bool } // the SDK's convention: a refused redirect says no
	if errors.As(err, &final) {
		return final.RetryableError()
	}
	var apiErr smithy.APIError
	if !errors.As(err, &apiErr) {
		return true
	}
	switch apiErr.ErrorCode() {
	case "ThrottlingException", "TooManyRequestsException", "Throttling", "RequestLimitExceeded",
		"ServerException", "ServiceUnavailableException", "InternalFailure", "RequestTimeoutException":
		return true
	}
	var resp interface{ HTTPStatusCode() int }
	if errors.As(err, &resp) {
		s := resp.HTTPStatusCode()
		return s == 429 || s >= 500
	}
	return false
}

// Code returns the EKS error code in err, or "" when err is not an EKS error.
func Code(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		return apiErr.ErrorCode()
	}
	return ""
}

// describe is err in short: "Code: message" for an EKS error, else err's text.
func describe(err error) string {
	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		if m := apiErr.ErrorMessage(); m != "" {
			return apiErr.ErrorCode() + ": " + m
		}
		return apiErr.ErrorCode()
	}
	return err.Error()
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
