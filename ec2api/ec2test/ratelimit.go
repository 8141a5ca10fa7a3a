package ec2test

import (
	"net/http"
	"time"
)

// bucket is the token bucket of one action's RateLimit.
type bucket struct {
	limit    RateLimit
	tokens   float64
	refilled time.Time
}

// limited takes a token of action's rate limit at now and reports whether the
// request is over the rate, with the error to answer; s.mu is held.
func (s *Server) limited(action string, now time.Time) (bool, Error) {
	b, ok := s.buckets[action]
	if !ok {
		return false, Error{}
	}
	l := b.limit
	b.tokens = min(float64(l.N), b.tokens+float64(l.N)*float64(now.Sub(b.refilled))/float64(l.Interval))
	b.refilled = now
	if b.tokens < 1 {
		s.answers.Throttled[action]++
		status, code := l.Status, l.Code
		if status == 0 {
			status, code = http.StatusServiceUnavailable, "RequestLimitExceeded"
		}
		return true, Error{Status: status, Code: code, Message: "Request limit exceeded."}
	}
	b.tokens--
	return false, Error{}
}
