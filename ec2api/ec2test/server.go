// Package ec2test is a fake EC2 Query API for tests and for the in-process demo: a
// real HTTP server on 127.0.0.1 that answers DescribeInstances and
// DescribeInstanceTypes from the Answers set with Update. It
// answers like the parity harness's fake_aws.py: POST / with a form body, XML in
// the EC2 2016-11-15 namespace, EC2's error codes, and no signature checking.
//
// Point ec2api (or, in its tests, the SDK's EC2 client) at it with AWS_ENDPOINT_URL_EC2=URL() (or
// BaseEndpoint) and static credentials.
package ec2test

import (
	"net/http"
	"sync"
	"time"

	"github.com/eksboot/eksboot/maxpods"

	"github.com/eksboot/eksboot/internal/fakehttp"
)

// Server is a running fake EC2 endpoint. Its methods are safe for concurrent use.
type Server struct {
	http *fakehttp.Server

	mu       sync.Mutex
	answers  Answers
	calls    map[string]int
	requests int
	buckets  map[string]*bucket
}

// Answers is what the server answers, set with Update (AddInstance is its short
// form for the one thing the demo sets).
type Answers struct {
	// Instances are what DescribeInstances reports, in order.
	Instances []Instance
	// Types are the instance types DescribeInstanceTypes reports, each with one
	// network card (index 0, the default) holding ENIs interfaces. An empty
	// Hypervisor or zero VCPUs are left out of the answer, as EC2 does for facts it
	// does not know.
	Types map[string]maxpods.TypeInfo
	// Errors make every request of an action (the key, e.g. "DescribeInstances")
	// fail with an EC2 error response, e.g. {403, "UnauthorizedOperation", "You are
	// not authorized to perform this operation."}.
	Errors map[string]Error
	// RateLimits let at most N requests of an action through per Interval (a token
	// bucket holding at most N, full when the limit is set or changed) and answer
	// the rest with the limit's error. Throttled counts the refused requests.
	RateLimits map[string]RateLimit
	// Throttled is how many requests of each action the rate limits refused; the
	// server counts them.
	Throttled map[string]int
}

// Instance is one instance DescribeInstances reports; an empty PrivateDNSName is
// reported as an empty privateDnsName element.
type Instance struct {
	ID, PrivateDNSName string
}

// Error is an EC2 error response: the HTTP status, EC2's error code and message.
type Error struct {
	Status        int
	Code, Message string
}

// RateLimit is a token bucket for one action: N requests per Interval. Status and
// Code are the answer to the requests over the rate; 0 and "" answer as EC2 does
// when an account's request rate is exceeded, HTTP 503 RequestLimitExceeded (400
// "Throttling" is the other EC2 answer).
type RateLimit struct {
	N        int
	Interval time.Duration
	Status   int
	Code     string
}

// NewServer starts a fake EC2 endpoint on a free port of 127.0.0.1. It knows no
// instances and no instance types until they are added. Close stops it.
func NewServer() (*Server, error) {
	s := &Server{
		answers: Answers{
			Types:      map[string]maxpods.TypeInfo{},
			Errors:     map[string]Error{},
			RateLimits: map[string]RateLimit{},
			Throttled:  map[string]int{},
		},
		calls:   map[string]int{},
		buckets: map[string]*bucket{},
	}
	var err error
	if s.http, err = fakehttp.Start("fake ec2", http.HandlerFunc(s.serveHTTP)); err != nil {
		return nil, err
	}
	return s, nil
}

// URL is the endpoint's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.http.URL() }

// Close stops the server and closes its connections.
func (s *Server) Close() error { return s.http.Close() }

// Update changes what the server answers: f edits the answers (never nil maps)
// while no request is answered. A rate limit that f sets or changes starts full.
func (s *Server) Update(f func(a *Answers)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(&s.answers)
	for action, l := range s.answers.RateLimits {
		if l.N <= 0 || l.Interval <= 0 {
			delete(s.answers.RateLimits, action)
			continue
		}
		if b, ok := s.buckets[action]; !ok || b.limit != l {
			s.buckets[action] = &bucket{limit: l, tokens: float64(l.N), refilled: time.Now()}
		}
	}
	for action := range s.buckets {
		if _, ok := s.answers.RateLimits[action]; !ok {
			delete(s.buckets, action)
		}
	}
}

// AddInstance adds (or replaces) an instance that DescribeInstances reports with
// privateDNSName.
func (s *Server) AddInstance(id, privateDNSName string) {
	s.Update(func(a *Answers) {
		for i := range a.Instances {
			if a.Instances[i].ID == id {
				a.Instances[i].PrivateDNSName = privateDNSName
				return
			}
		}
		a.Instances = append(a.Instances, Instance{ID: id, PrivateDNSName: privateDNSName})
	})
}

// Calls returns how many requests for action the server has received, including
// the ones it answered with an error.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}
