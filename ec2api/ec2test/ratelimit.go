package ec2test

import (
	"net/http"
	"time"
)

// rateLimit is a token bucket for one action: at most n requests per interval, with
// bursts of up to n.
type rateLimit struct {
	n        int
	interval time.Duration
	status   int
	code     string
	tokens   float64
	refilled time.Time
}

// SetRateLimit lets n requests of action through per interval (a token bucket
// holding at most n, full at the start) and answers the rest as EC2 does when an
// account's request rate is exceeded: HTTP 503 RequestLimitExceeded. n = 0 removes
// the limit. Throttled counts the refused requests.
func (s *Server) SetRateLimit(action string, n int, interval time.Duration) {
	s.SetRateLimitError(action, n, interval, http.StatusServiceUnavailable, "RequestLimitExceeded")
}

// SetRateLimitError is SetRateLimit answering the requests above the rate with
// status and code instead, e.g. 400 "Throttling".
func (s *Server) SetRateLimitError(action string, n int, interval time.Duration, status int, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n <= 0 || interval <= 0 {
		delete(s.limits, action)
		return
	}
	s.limits[action] = &rateLimit{
		n: n, interval: interval, status: status, code: code,
		tokens: float64(n), refilled: time.Now(),
	}
}

// Throttled returns how many requests for action were refused by its rate limit.
func (s *Server) Throttled(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled[action]
}

// limited takes a token of action's rate limit at now and reports whether the
// request is over the rate, with the error to answer; s.mu is held.
func (s *Server) limited(action string, now time.Time) (bool, apiError) {
	l, ok := s.limits[action]
	if !ok {
		return false, apiError{}
	}
	l.tokens = min(float64(l.n), l.tokens+float64(l.n)*float64(now.Sub(l.refilled))/float64(l.interval))
	l.refilled = now
	if l.tokens < 1 {
		s.throttled[action]++
		return true, apiError{status: l.status, code: l.code, message: "Request limit exceeded."}
	}
	l.tokens--
	return false, apiError{}
}
