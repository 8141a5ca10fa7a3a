package imds

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"time"
)

// maxInvalidAnswers is how many answers that are not a value (an HTML page, an
// empty body, a malformed value, a token that is not one) a path may give
// before it fails. A glitch is asked again; a service that keeps saying the
// same wrong thing fails in a few backoffs rather than at the deadline.
const maxInvalidAnswers = 3

// errAbandoned is the cause of the cancellation of paths whose sibling failed.
var errAbandoned = errors.New("abandoned: another path failed")

// verdict is what one attempt at a path means for the next.
type verdict int

const (
	answered  verdict = iota // the value is stored
	absent                   // an optional path answered 404: the value stays empty
	transient                // try again after a backoff
	invalid                  // an answer that is not a value: try again, a few times
	permanent                // fail the path now
	stopped                  // the Fetch's context ended during the attempt
)

// read fetches and parses one path, retrying until it has a value, fails for
// good, or the context ends. Its error is a *PathError.
func (c *client) read(ctx context.Context, q query) error {
	var attempts, invalids, status int
	var last error
	for ctx.Err() == nil {
		attempts++
		v, st, reason := c.attempt(ctx, q)
		if st != 0 {
			status = st
		}
		if reason != nil && (v != stopped || last == nil) {
			last = reason // an attempt cut by the deadline tells less than an earlier answer
		}
		switch v {
		case answered, absent:
			return nil
		case permanent:
			return &PathError{Path: q.path, Attempts: attempts, Status: status, Err: reason}
		case invalid:
			if invalids++; invalids >= maxInvalidAnswers {
				return &PathError{
					Path: q.path, Attempts: attempts, Status: status,
					Err: fmt.Errorf("%w (%d invalid answers in %d attempts)", reason, invalids, attempts),
				}
			}
		}
		if v != stopped {
			c.backoff(ctx, attempts)
		}
	}
	return c.giveUp(ctx, q.path, attempts, status, last)
}

// giveUp is read's error when the context ended: the deadline, the caller's
// cancellation, or a sibling's failure (errAbandoned, not reported).
func (c *client) giveUp(ctx context.Context, path string, attempts, status int, last error) error {
	cause := context.Cause(ctx)
	if errors.Is(cause, errAbandoned) {
		return errAbandoned
	}
	why := "no answer"
	if last != nil {
		why = last.Error()
	}
	statusNote := "no HTTP status"
	if status != 0 {
		statusNote = fmt.Sprintf("last status %d", status)
	}
	var err error
	if errors.Is(cause, context.DeadlineExceeded) {
		err = fmt.Errorf("gave up at the %v deadline after %s (%s): %s", c.opts.Timeout, plural(attempts, "attempt"), statusNote, why)
	} else {
		err = fmt.Errorf("%w after %s (%s): %s", cause, plural(attempts, "attempt"), statusNote, why)
	}
	return &PathError{Path: path, Attempts: attempts, Status: status, Err: err}
}

// backoff waits before attempt n+1: a jittered exponential backoff, from
// MinBackoff doubling up to MaxBackoff, each wait drawn from its upper half.
// It returns early when ctx ends.
func (c *client) backoff(ctx context.Context, n int) {
	d := c.opts.MaxBackoff
	if n-1 < 30 && c.opts.MinBackoff<<(n-1) < d {
		d = c.opts.MinBackoff << (n - 1)
	}
	d = d/2 + rand.N(d/2+1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// attempt makes one attempt at q under its own timeout and judges it,
// returning the GET's status (0 if none) and, unless answered, the reason.
func (c *client) attempt(ctx context.Context, q query) (verdict, int, error) {
	actx, cancel := context.WithTimeout(ctx, c.opts.AttemptTimeout)
	defer cancel()
	ex := &exchange{}
	body, err := c.get(context.WithValue(actx, exchangeKey{}, ex), q.path)
	if err == nil {
		if perr := q.parse(body); perr != nil {
			return invalid, ex.status, perr
		}
		return answered, ex.status, nil
	}
	var tl *tooLargeError
	var re *redirectError
	switch {
	case ex.status == http.StatusOK && errors.As(err, &tl):
		return permanent, ex.status, tl // not a glitch: asking again reads as much again
	case errors.As(ex.err, &re):
		return permanent, re.status, re
	case errors.As(ex.tokenErr, &re):
		return permanent, 0, fmt.Errorf("session token (PUT %s): %w", PathToken, re)
	}
	switch s := ex.status; {
	case s == http.StatusNotFound && q.optional:
		return absent, s, nil
	case s == http.StatusNotFound:
		return transient, s, errors.New("not found (404), but it is required: not populated yet, or not at all")
	case s == http.StatusUnauthorized:
		return transient, s, errors.New("unauthorized (401): the session token was refused or has expired")
	case s == http.StatusRequestTimeout, s == http.StatusTooManyRequests, s >= 500:
		return transient, s, statusError(s)
	case s == http.StatusOK:
		return transient, s, err // the body broke off
	case s != 0:
		return permanent, s, statusError(s)
	}
	// No GET answered: the token or the connection failed, or time ran out.
	if v, ok, err := c.tokenVerdict(ex); ok {
		return v, 0, err
	}
	switch {
	case ctx.Err() != nil && ex.tokenAsked && ex.tokenStatus == 0:
		return stopped, 0, fmt.Errorf("session token (PUT %s): no answer", PathToken)
	case ctx.Err() != nil:
		return stopped, 0, nil
	case actx.Err() != nil && ex.tokenAsked && ex.tokenStatus == 0:
		return transient, 0, fmt.Errorf("session token (PUT %s): no answer within the %v attempt timeout", PathToken, c.opts.AttemptTimeout)
	case actx.Err() != nil:
		return transient, 0, fmt.Errorf("no answer within the %v attempt timeout", c.opts.AttemptTimeout)
	case ex.err != nil:
		return transient, 0, fmt.Errorf("no answer: %w", ex.err)
	case ex.tokenErr != nil:
		return transient, 0, fmt.Errorf("session token (PUT %s): no answer: %w", PathToken, ex.tokenErr)
	}
	return permanent, 0, err // the SDK failed before sending anything
}

// tokenVerdict judges an attempt whose GET got no answer by the session token's PUT:
// ok is false when the token was not the problem.
func (c *client) tokenVerdict(ex *exchange) (v verdict, ok bool, err error) {
	switch ts := ex.tokenStatus; {
	case ts == http.StatusOK && ex.tokenErr != nil:
		return invalid, true, fmt.Errorf("session token (PUT %s): %w", PathToken, ex.tokenErr)
	case ts == http.StatusForbidden, ts == http.StatusNotFound, ts == http.StatusMethodNotAllowed:
		if c.opts.AllowIMDSv1 {
			return permanent, true, fmt.Errorf("session token (PUT %s): %w", PathToken, statusError(ts))
		}
		return permanent, true, fmt.Errorf("the service refused an IMDSv2 session token (PUT %s: %w) and IMDSv1 fallback is off", PathToken, statusError(ts))
	case ts == http.StatusBadRequest:
		return permanent, true, fmt.Errorf("session token (PUT %s): %w", PathToken, statusError(ts))
	case ts != 0 && ts != http.StatusOK:
		return transient, true, fmt.Errorf("session token (PUT %s): %w", PathToken, statusError(ts))
	}
	return 0, false, nil
}

// plural returns "1 attempt", "2 attempts".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// statusError describes an HTTP status the service answered.
func statusError(s int) error {
	return fmt.Errorf("status %d (%s)", s, http.StatusText(s))
}
