package eksapi

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/awsconf"
)

// script is a fake API that gives its answers in turn (the last one again and again).
type script struct {
	answers []answer
	calls   int
}

type answer struct {
	status  string // a cluster in this status, when err is nil
	err     error
	serving bool // the answer has an endpoint and a CA even though not ACTIVE
}

func (s *script) DescribeCluster(ctx context.Context, name string) (*Cluster, error) {
	a := s.answers[min(s.calls, len(s.answers)-1)]
	s.calls++
	if a.err != nil {
		return nil, a.err
	}
	c := &Cluster{Name: name, Status: a.status}
	if a.status == StatusActive || a.serving {
		c.Endpoint, c.CAData = "https://EXAMPLE.gr7.us-west-2.eks.amazonaws.com", "Q0E="
	}
	return c, nil
}

func apiErr(code string) answer {
	return answer{err: &smithy.GenericAPIError{Code: code, Message: "message of " + code}}
}

func status(s string) answer { return answer{status: s} }

func TestDiscover(t *testing.T) {
	const s = time.Second
	throttled, active, creating := apiErr("ThrottlingException"), status(StatusActive), status(StatusCreating)
	tests := []struct {
		name      string
		retries   int
		answers   []answer
		wantCalls int
		wantWaits []time.Duration // with Rand 0.5: backoff 1.5·b, poll = Poll
		wantErr   string          // "" for success
		reason    Reason
	}{
		{"active at once", 3, []answer{active}, 1, nil, "", ""},
		{"creating, then active", 3, []answer{creating, creating, active}, 3, []time.Duration{30 * s, 30 * s}, "", ""},
		{"updating with an endpoint and a CA is joined at once", 3, []answer{{status: StatusUpdating, serving: true}}, 1, nil, "", ""},
		{"updating and pending are waited for too", 0, []answer{status(StatusUpdating), status(StatusPending), active}, 3, []time.Duration{30 * s, 30 * s}, "", ""},
		{"throttled 3 times, then active", 3, []answer{throttled, throttled, throttled, active}, 4, []time.Duration{15 * s, 30 * s, 60 * s}, "", ""},
		{
			"throttled beyond the budget", 3,
			[]answer{throttled},
			4,
			[]time.Duration{15 * s, 30 * s, 60 * s},
			"eks:DescribeCluster demo: gave up: every retry failed (4 calls; last error: ThrottlingException: message of ThrottlingException)", ReasonBudget,
		},
		{"no retries", 0, []answer{throttled, active}, 1, nil, "gave up", ReasonBudget},
		{
			"an answer resets the failure count", 2,
			[]answer{throttled, throttled, creating, throttled, throttled, active},
			6,
			[]time.Duration{15 * s, 30 * s, 30 * s, 15 * s, 30 * s},
			"", "",
		},
		{
			"server errors and timeouts are retried", 2,
			[]answer{apiErr("ServiceUnavailableException"), {err: context.DeadlineExceeded}, active},
			3,
			[]time.Duration{15 * s, 30 * s},
			"", "",
		},
		{
			"access denied is final", 3,
			[]answer{apiErr("AccessDeniedException")},
			1, nil,
			"eks:DescribeCluster demo: refused (1 call; last error: AccessDeniedException: message of AccessDeniedException)", ReasonRefused,
		},
		{"not found is final", 3, []answer{apiErr("ResourceNotFoundException")}, 1, nil, "ResourceNotFoundException", ReasonRefused},
		{
			"deleting cannot become active", 3,
			[]answer{creating, status(StatusDeleting)},
			2,
			[]time.Duration{30 * s},
			"eks:DescribeCluster demo: the cluster is DELETING (2 calls)", ReasonStatus,
		},
		{"failed cannot become active", 3, []answer{status(StatusFailed)}, 1, nil, "the cluster is FAILED", ReasonStatus},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			api := &script{answers: tc.answers}
			var waits []time.Duration
			p := Policy{
				Retries: tc.retries,
				Rand:    func() float64 { return 0.5 },
				Sleep:   func(ctx context.Context, d time.Duration) error { waits = append(waits, d); return nil },
			}
			c, calls, err := Discover(context.Background(), api, "demo", p)
			if calls != tc.wantCalls || api.calls != tc.wantCalls {
				t.Errorf("calls: got %d (API saw %d), want %d", calls, api.calls, tc.wantCalls)
			}
			if !reflect.DeepEqual(waits, tc.wantWaits) {
				t.Errorf("waits: got %v, want %v", waits, tc.wantWaits)
			}
			if tc.wantErr == "" {
				if err != nil || c == nil || c.Endpoint == "" || c.CAData == "" {
					t.Fatalf("got %+v, %v; want a serving cluster", c, err)
				}
				return
			}
			var de *Error
			if !errors.As(err, &de) || !strings.Contains(err.Error(), tc.wantErr) || de.Reason != tc.reason {
				t.Fatalf("error %v; want an *Error with reason %q containing %q", err, tc.reason, tc.wantErr)
			}
		})
	}
}

func TestDiscoverStopsBeforeAWaitPastTheDeadline(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	api := &script{answers: []answer{status(StatusCreating)}}
	p := Policy{Poll: 4 * time.Hour, Sleep: func(context.Context, time.Duration) error { t.Fatal("slept"); return nil }}
	_, calls, err := Discover(ctx, api, "demo", p)
	var de *Error
	if !errors.As(err, &de) || de.Reason != ReasonDeadline || calls != 1 || de.Status != StatusCreating {
		t.Fatalf("got %d calls, %v; want a deadline error after 1 call", calls, err)
	}
	if want := "no answer with an ACTIVE cluster before the deadline (1 call; last status: CREATING)"; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q lacks %q", err, want)
	}
}

func TestDiscoverActiveWithoutCAIsAnError(t *testing.T) {
	api := apiFunc(func(ctx context.Context, name string) (*Cluster, error) {
		return &Cluster{Name: name, Status: StatusActive, Endpoint: "https://x.example.com"}, nil
	})
	_, _, err := Discover(context.Background(), api, "demo", Policy{Retries: 3})
	if err == nil || !strings.Contains(err.Error(), "lacks its endpoint or CA") {
		t.Fatalf("got %v", err)
	}
}

type apiFunc func(ctx context.Context, name string) (*Cluster, error)

func (f apiFunc) DescribeCluster(ctx context.Context, name string) (*Cluster, error) {
	return f(ctx, name)
}

func TestBackoff(t *testing.T) {
	p := Policy{Base: time.Second, Max: 4 * time.Second, Rand: func() float64 { return 0 }}.withDefaults()
	var got []time.Duration
	for k := 1; k <= 6; k++ {
		got = append(got, p.backoff(k))
	}
	want := []time.Duration{1, 2, 4, 4, 4, 4}
	for i := range want {
		want[i] *= time.Second
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("lower bounds: got %v, want %v", got, want)
	}
	p.Rand = func() float64 { return 0.999 }
	if d := p.backoff(1); d < time.Second || d >= 2*time.Second {
		t.Errorf("backoff(1) = %v, want within [1s, 2s)", d)
	}
}

func TestRetryable(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{&smithy.GenericAPIError{Code: "ThrottlingException"}, true},
		{&smithy.GenericAPIError{Code: "ServerException"}, true},
		{&smithy.GenericAPIError{Code: "AccessDeniedException"}, false},
		{&smithy.GenericAPIError{Code: "ResourceNotFoundException"}, false},
		{&smithy.GenericAPIError{Code: "InvalidParameterException"}, false},
		{errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("describe cluster demo: %w", &awsconf.RedirectError{Method: "GET", Path: "/clusters/demo", Status: 307, Host: "elsewhere"}), false},
	}
	for _, tc := range tests {
		if got := Retryable(tc.err); got != tc.want {
			t.Errorf("Retryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
