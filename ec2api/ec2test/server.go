// Package ec2test is a fake EC2 Query API for tests and for the in-process demo: a
// real HTTP server on 127.0.0.1 that answers DescribeInstances and
// DescribeInstanceTypes from facts added with AddInstance and AddInstanceType. It
// answers like the parity harness's fake_aws.py: POST / with a form body, XML in
// the EC2 2016-11-15 namespace, EC2's error codes, and no signature checking.
//
// Point an aws-sdk-go-v2 EC2 client at it with AWS_ENDPOINT_URL_EC2=URL() (or
// BaseEndpoint) and static credentials.
package ec2test

import (
	"net/http"
	"sync"

	"github.com/eksboot/eksboot/maxpods"

	"github.com/eksboot/eksboot/internal/fakehttp"
)

// Server is a running fake EC2 endpoint. Its methods are safe for concurrent use.
type Server struct {
	http *fakehttp.Server

	mu        sync.Mutex
	instances []instance
	types     map[string]maxpods.TypeInfo
	errs      map[string]apiError
	calls     map[string]int
	requests  int
	limits    map[string]*rateLimit
	throttled map[string]int
}

type instance struct {
	id, privateDNSName string
}

type apiError struct {
	status        int
	code, message string
}

// NewServer starts a fake EC2 endpoint on a free port of 127.0.0.1. It knows no
// instances and no instance types until they are added. Close stops it.
func NewServer() (*Server, error) {
	s := &Server{
		types:     map[string]maxpods.TypeInfo{},
		errs:      map[string]apiError{},
		calls:     map[string]int{},
		limits:    map[string]*rateLimit{},
		throttled: map[string]int{},
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

// AddInstance adds (or replaces) an instance that DescribeInstances reports with
// privateDNSName; an empty name is reported as an empty privateDnsName element.
func (s *Server) AddInstance(id, privateDNSName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.instances {
		if s.instances[i].id == id {
			s.instances[i].privateDNSName = privateDNSName
			return
		}
	}
	s.instances = append(s.instances, instance{id: id, privateDNSName: privateDNSName})
}

// AddInstanceType adds (or replaces) an instance type that DescribeInstanceTypes
// reports with one network card (index 0, the default) holding info.ENIs
// interfaces. An empty Hypervisor or zero VCPUs are left out of the answer, as EC2
// does for facts it does not know.
func (s *Server) AddInstanceType(name string, info maxpods.TypeInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.types[name] = info
}

// SetError makes every later call of action fail with an EC2 error response, e.g.
// ("DescribeInstances", 403, "UnauthorizedOperation", "You are not authorized to
// perform this operation."). A status of 0 removes the error for action.
func (s *Server) SetError(action string, status int, code, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if status == 0 {
		delete(s.errs, action)
		return
	}
	s.errs[action] = apiError{status: status, code: code, message: message}
}

// Calls returns how many requests for action the server has received, including
// the ones it answered with an error.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}
