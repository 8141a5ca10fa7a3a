package eksapi_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/eksboot/eksboot/eksapi"
	"github.com/eksboot/eksboot/eksapi/eksapitest"
)

var demo = eksapitest.Cluster{
	Name:            "demo",
	Endpoint:        "https://0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com",
	CAData:          "Q0EgREFUQQ==",
	ServiceIPv4CIDR: "10.100.0.0/16",
	IPFamily:        "ipv4",
}

func newFake(t testing.TB) *eksapitest.Server {
	t.Helper()
	s, err := eksapitest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	s.AddCluster(demo)
	return s
}

// clientFor returns a Client of the fake with dummy credentials.
func clientFor(t testing.TB, s *eksapitest.Server) *eksapi.Client {
	t.Helper()
	c, err := eksapi.New(aws.Config{
		Region:       "us-west-2",
		BaseEndpoint: aws.String(s.URL()),
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDFAKE", SecretAccessKey: "fake", Source: "test"}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestDescribeCluster(t *testing.T) {
	s := newFake(t)
	s.AddCluster(eksapitest.Cluster{Name: "v6", Endpoint: "https://v6.example.com", CAData: "Q0E=", ServiceIPv6CIDR: "fd00:10:96::/112", IPFamily: "ipv6", ID: "c0ffee", OutpostARN: "arn:aws:outposts:us-west-2:111122223333:outpost/op-1"})
	s.AddCluster(eksapitest.Cluster{Name: "new", Endpoint: "https://new.example.com", CAData: "Q0E=", Statuses: []string{"CREATING"}})
	c := clientFor(t, s)
	tests := []struct {
		name      string
		want      *eksapi.Cluster
		code      string
		retryable bool
		setup     func()
	}{
		{name: "demo", want: &eksapi.Cluster{Name: "demo", Status: "ACTIVE", Endpoint: demo.Endpoint, CAData: demo.CAData, ServiceIPv4CIDR: "10.100.0.0/16", IPFamily: "ipv4"}},
		{name: "v6", want: &eksapi.Cluster{Name: "v6", Status: "ACTIVE", Endpoint: "https://v6.example.com", CAData: "Q0E=", ServiceIPv6CIDR: "fd00:10:96::/112", IPFamily: "ipv6", ID: "c0ffee", OutpostARN: "arn:aws:outposts:us-west-2:111122223333:outpost/op-1"}},
		{name: "new", want: &eksapi.Cluster{Name: "new", Status: "CREATING"}},
		{name: "missing", code: "ResourceNotFoundException"},
		{name: "demo", code: "ThrottlingException", retryable: true, setup: func() { s.Throttle(1) }},
		{name: "demo", code: "AccessDeniedException", setup: func() { s.SetError(403, "AccessDeniedException", "not authorized") }},
		{name: "demo", code: "ServerException", retryable: true, setup: func() { s.SetError(500, "ServerException", "oops") }},
	}
	for _, tc := range tests {
		t.Run(tc.name+" "+tc.code, func(t *testing.T) {
			if tc.setup != nil {
				tc.setup()
				defer s.SetError(0, "", "")
			}
			got, err := c.DescribeCluster(context.Background(), tc.name)
			if tc.code == "" {
				if err != nil || !reflect.DeepEqual(got, tc.want) {
					t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
				}
				return
			}
			if eksapi.Code(err) != tc.code || eksapi.Retryable(err) != tc.retryable {
				t.Fatalf("error %v: code %q retryable %v; want %q, %v", err, eksapi.Code(err), eksapi.Retryable(err), tc.code, tc.retryable)
			}
		})
	}
}

// TestDiscoverOverHTTP runs Discover with the real client against the fake.
func TestDiscoverOverHTTP(t *testing.T) {
	fast := eksapi.Policy{Retries: 3, Base: time.Millisecond, Max: 4 * time.Millisecond, Poll: 2 * time.Millisecond}
	tests := []struct {
		name      string
		setup     func(s *eksapitest.Server)
		policy    eksapi.Policy
		timeout   time.Duration
		wantCalls int
		reason    eksapi.Reason // "" for success
		wantErr   string
	}{
		{name: "active", wantCalls: 1},
		{name: "creating then active", wantCalls: 3, setup: func(s *eksapitest.Server) {
			c := demo
			c.Statuses = []string{"CREATING", "CREATING", "ACTIVE"}
			s.AddCluster(c)
		}},
		{name: "throttled 3 times then active", wantCalls: 4, setup: func(s *eksapitest.Server) { s.Throttle(3) }},
		{
			name: "throttled past the budget", wantCalls: 4, reason: eksapi.ReasonBudget, wantErr: "ThrottlingException: Rate exceeded",
			setup: func(s *eksapitest.Server) { s.Throttle(4) },
		},
		{
			name: "access denied", wantCalls: 1, reason: eksapi.ReasonRefused, wantErr: "AccessDeniedException",
			setup: func(s *eksapitest.Server) { s.SetError(403, "AccessDeniedException", "User is not authorized") },
		},
		{
			name: "hung server: each call times out, the budget ends it", wantCalls: 4, reason: eksapi.ReasonBudget,
			setup: func(s *eksapitest.Server) { s.SetHang(true) }, policy: eksapi.Policy{CallTimeout: 20 * time.Millisecond},
		},
		{
			name: "hung server: the deadline ends it", wantCalls: 1, reason: eksapi.ReasonDeadline, timeout: 100 * time.Millisecond,
			setup: func(s *eksapitest.Server) { s.SetHang(true) }, policy: eksapi.Policy{CallTimeout: time.Hour},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newFake(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			p := fast
			if tc.policy.CallTimeout != 0 {
				p.CallTimeout = tc.policy.CallTimeout
			}
			ctx := context.Background()
			if tc.timeout != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.timeout)
				defer cancel()
			}
			c, calls, err := eksapi.Discover(ctx, clientFor(t, s), "demo", p)
			if calls != tc.wantCalls || s.Calls() != tc.wantCalls {
				t.Errorf("calls: Discover counted %d, the fake %d; want %d", calls, s.Calls(), tc.wantCalls)
			}
			if tc.reason == "" {
				if err != nil || c.Endpoint != demo.Endpoint || c.CAData != demo.CAData {
					t.Fatalf("got %+v, %v", c, err)
				}
				return
			}
			var de *eksapi.Error
			if !errors.As(err, &de) || de.Reason != tc.reason || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error %v; want reason %q with %q", err, tc.reason, tc.wantErr)
			}
		})
	}
}
