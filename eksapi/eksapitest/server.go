// Package eksapitest is a fake Amazon EKS API for tests, simulations and demos: a real
// HTTP server on 127.0.0.1 that answers eks:DescribeCluster (GET /clusters/{name}) in
// the service's REST/JSON shape, with EKS's error codes, from clusters added with
// AddCluster. Faults are programmable: a sequence of statuses (CREATING, then
// ACTIVE), N throttled answers, a fixed error such as AccessDeniedException, requests
// that hang, and a requests-per-interval rate limit that throttles what exceeds it.
// Signatures are not checked.
//
// Point an aws-sdk-go-v2 EKS client at it with AWS_ENDPOINT_URL_EKS=URL() (or
// BaseEndpoint) and static credentials.
package eksapitest

import (
	"net/http"
	"sync"
	"time"

	"github.com/eksboot/eksboot/internal/fakehttp"
)

// Cluster is a cluster the fake knows. Empty fields are answered as JSON null (or
// left out), as EKS does for facts it does not have.
type Cluster struct {
	Name            string
	Endpoint        string
	CAData          string // base64 of the CA's PEM, as certificateAuthority.data
	ServiceIPv4CIDR string
	ServiceIPv6CIDR string
	IPFamily        string // "ipv4" or "ipv6"
	ID              string
	OutpostARN      string
	// Statuses are answered in turn, the last one for every later call; none means
	// ACTIVE. While a status is CREATING the endpoint and CA are left out, as EKS does.
	Statuses []string
}

// Server is a running fake EKS endpoint. Its methods are safe for concurrent use.
type Server struct {
	http *fakehttp.Server
	done chan struct{} // closed by Close: releases hung requests

	mu        sync.Mutex
	clusters  map[string]*clusterState
	throttleN int       // the next throttleN requests are throttled
	fixed     *apiError // every request fails with it
	hang      bool
	rate      int           // requests allowed per interval; 0: no limit
	interval  time.Duration // the rate's interval
	tokens    float64
	refilled  time.Time
	calls     int
	accessKey string // of the last request's SigV4 Authorization header
	throttled int
}

type clusterState struct {
	Cluster
	answered int
}

type apiError struct {
	status        int
	code, message string
}

// NewServer starts a fake EKS endpoint on a free port of 127.0.0.1. It knows no
// clusters until they are added. Close stops it.
func NewServer() (*Server, error) {
	s := &Server{done: make(chan struct{}), clusters: map[string]*clusterState{}}
	var err error
	if s.http, err = fakehttp.Start("fake eks", http.HandlerFunc(s.serveHTTP)); err != nil {
		return nil, err
	}
	return s, nil
}

// URL is the endpoint's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.http.URL() }

// Close releases hung requests, stops the server and closes its connections.
func (s *Server) Close() error {
	s.mu.Lock()
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.mu.Unlock()
	return s.http.Close()
}

// AddCluster adds (or replaces) a cluster; its status sequence starts afresh.
func (s *Server) AddCluster(c Cluster) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clusters[c.Name] = &clusterState{Cluster: c}
}

// Throttle makes the next n requests fail with HTTP 429 ThrottlingException.
func (s *Server) Throttle(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttleN = n
}

// SetError makes every later request fail with an EKS error, e.g. (403,
// "AccessDeniedException", "User: ... is not authorized to perform:
// eks:DescribeCluster"). A status of 0 removes it.
func (s *Server) SetError(status int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		s.fixed = nil
		return
	}
	s.fixed = &apiError{status: status, code: code, message: message}
}

// SetHang makes later requests hang (no answer) until the client gives up or the
// server is closed; false answers them again.
func (s *Server) SetHang(hang bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hang = hang
}

// SetRateLimit lets n requests through per interval (a token bucket holding at most
// n) and throttles the rest with HTTP 429 ThrottlingException, as EKS's account
// limits do. n = 0 removes the limit.
func (s *Server) SetRateLimit(n int, interval time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate, s.interval = n, interval
	s.tokens, s.refilled = float64(n), time.Now()
}

// Calls returns how many requests the server has received, answered or not.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// LastAccessKey returns the access key ID that signed the last request (the
// Credential= of its SigV4 Authorization header), "" when none did.
func (s *Server) LastAccessKey() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accessKey
}

// Throttled returns how many requests were answered with ThrottlingException.
func (s *Server) Throttled() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.throttled
}

// allow takes a token from the rate limit's bucket; s.mu is held.
func (s *Server) allow(now time.Time) bool {
	if s.rate <= 0 {
		return true
	}
	s.tokens += float64(s.rate) * float64(now.Sub(s.refilled)) / float64(s.interval)
	s.tokens = min(s.tokens, float64(s.rate))
	s.refilled = now
	if s.tokens < 1 {
		return false
	}
	s.tokens--
	return true
}
