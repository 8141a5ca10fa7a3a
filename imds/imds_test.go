package imds_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
)

// Every test points Fetch at a 127.0.0.1 fake; none relies on the SDK default.

func startFake(t *testing.T, inst imdstest.Instance) *imdstest.Server {
	t.Helper()
	s, err := imdstest.NewServer(inst)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

// factsOf is what Fetch should report for inst when nothing is overridden.
func factsOf(inst imdstest.Instance) *imds.Facts {
	return &imds.Facts{
		Region:           inst.Region,
		AccountID:        inst.AccountID,
		Domain:           inst.Domain,
		InstanceType:     inst.InstanceType,
		InstanceID:       inst.InstanceID,
		AvailabilityZone: inst.AvailabilityZone,
		MAC:              inst.MAC,
		LocalIPv4:        inst.LocalIPv4,
		LocalHostname:    inst.LocalHostname,
		IPv6s:            inst.IPv6s,
		VPCIPv4CIDRs:     inst.VPCIPv4CIDRBlocks,
	}
}

func str(s string) *string { return &s }

// fast returns Options for s whose retries take milliseconds, with timeout
// as the deadline of the whole Fetch.
func fast(s *imdstest.Server, timeout time.Duration) imds.Options {
	return imds.Options{
		Endpoint:       s.URL(),
		Timeout:        timeout,
		AttemptTimeout: 2 * time.Second,
		MinBackoff:     time.Millisecond,
		MaxBackoff:     5 * time.Millisecond,
	}
}

func TestFetch(t *testing.T) {
	macs := "latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/"
	tests := []struct {
		name   string
		modify func(*imdstest.Instance)
		want   func(*imds.Facts) // changes from factsOf(instance)
	}{
		{name: "default instance"},
		{
			name: "ipv6 and two VPC CIDRs",
			modify: func(in *imdstest.Instance) {
				in.IPv6s = []string{"2600:1f14:abcd:1200:1a2b:3c4d:5e6f:7a8b", "2600:1f14:abcd:1200::7"}
				in.VPCIPv6CIDRBlocks = []string{"2600:1f14:abcd:1200::/56"}
				in.VPCIPv4CIDRBlocks = []string{"192.168.0.0/16", "100.64.0.0/16"}
			},
		},
		{
			name: "china partition",
			modify: func(in *imdstest.Instance) {
				in.Region, in.AvailabilityZone, in.Domain = "cn-north-1", "cn-north-1a", "amazonaws.com.cn"
				in.InstanceType = "m5.xlarge"
			},
		},
		{
			name: "optional paths answer 404",
			modify: func(in *imdstest.Instance) {
				in.Overrides = map[string]*string{
					imds.PathDomain:                 nil,
					imds.PathLocalIPv4:              nil,
					imds.PathLocalHostname:          nil,
					imds.PathIdentityDocument:       str(`{"region": "us-west-2"}`),
					"latest/meta-data/hostname":     nil,
					"latest/meta-data/services/foo": str("unused"),
				}
			},
			want: func(f *imds.Facts) {
				f.Domain, f.LocalIPv4, f.LocalHostname, f.AccountID = "", "", "", ""
			},
		},
		{
			name:   "user data, bytes as served",
			modify: func(in *imdstest.Instance) { in.UserData = "#!/bin/bash\n/etc/eks/bootstrap.sh demo\n" },
			want:   func(f *imds.Facts) { f.UserData = []byte("#!/bin/bash\n/etc/eks/bootstrap.sh demo\n") },
		},
		{
			name: "answers with surrounding white space and several host names",
			modify: func(in *imdstest.Instance) {
				in.Overrides = map[string]*string{
					imds.PathInstanceType:         str("m5.large\n"),
					imds.PathLocalHostname:        str("ip-192-168-45-67.ec2.internal example.com"),
					macs + "vpc-ipv4-cidr-blocks": str("192.168.0.0/16\n\n10.1.0.0/16\n"),
				}
			},
			want: func(f *imds.Facts) {
				f.LocalHostname = "ip-192-168-45-67.ec2.internal example.com"
				f.VPCIPv4CIDRs = []string{"192.168.0.0/16", "10.1.0.0/16"}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			if tt.modify != nil {
				tt.modify(&inst)
			}
			s := startFake(t, inst)
			got, err := imds.Fetch(context.Background(), imds.Options{Endpoint: s.URL(), Timeout: 30 * time.Second, UserData: inst.UserData != ""})
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			want := factsOf(inst)
			if tt.want != nil {
				tt.want(want)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestFetchErrors(t *testing.T) {
	macs := "latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/"
	notFoundPage := "<?xml version=\"1.0\"?>\n<html><body><h1>404 - Not Found</h1></body></html>"
	tests := []struct {
		name       string
		path       string  // overridden path, and the path the error must name
		body       *string // nil: 404, retried until the deadline (the path may appear late)
		wantReason string
	}{
		{"instance type 404", imds.PathInstanceType, nil, "not found"},
		{"vpc cidrs 404", macs + "vpc-ipv4-cidr-blocks", nil, "not found"},
		{"instance type HTML", imds.PathInstanceType, &notFoundPage, "HTML page"},
		{"instance type garbage", imds.PathInstanceType, str("large m5"), "not an instance type"},
		{"instance type empty", imds.PathInstanceType, str(""), "empty answer"},
		{"instance id 404", imds.PathInstanceID, nil, "not found"},
		{"instance id two lines", imds.PathInstanceID, str("i-1\ni-2"), "2 lines"},
		{"zone 404", imds.PathAvailabilityZone, nil, "not found"},
		{"zone blank", imds.PathAvailabilityZone, str(" \n"), "empty answer"},
		{"mac 404", imds.PathMAC, nil, "not found"},
		{"mac garbage", imds.PathMAC, str("0a:1b:2c"), "not a MAC address"},
		{"document 404", imds.PathIdentityDocument, nil, "not found"},
		{"document HTML", imds.PathIdentityDocument, &notFoundPage, "HTML page"},
		{"document not an object", imds.PathIdentityDocument, str(`["us-west-2"]`), "not a JSON object"},
		{"document broken JSON", imds.PathIdentityDocument, str(`{"region": "us-west-2"`), "identity document"},
		{"document without region", imds.PathIdentityDocument, str(`{"accountId": "111122223333"}`), "no region"},
		{"document region not a string", imds.PathIdentityDocument, str(`{"region": 5}`), "identity document"},
		{"local ipv4 is ipv6", imds.PathLocalIPv4, str("fd00::1"), "not an IPv4 address"},
		{"local hostname HTML", imds.PathLocalHostname, &notFoundPage, "HTML page"},
		{"domain garbage", imds.PathDomain, str("amazonaws com"), "not a single name"},
		{"ipv6s hold ipv4", macs + "ipv6s", str("2600::1\n10.0.0.1"), "line 2"},
		{"cidr invalid", macs + "vpc-ipv4-cidr-blocks", str("10.0.0.0/33"), "not an IPv4 CIDR block"},
		{"cidr HTML", macs + "vpc-ipv4-cidr-blocks", &notFoundPage, "HTML page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // most wait out a deadline
			inst := imdstest.DefaultInstance()
			inst.Overrides = map[string]*string{tt.path: tt.body}
			s := startFake(t, inst)
			timeout := 30 * time.Second // invalid answers fail after a few attempts
			if tt.body == nil {
				timeout = 300 * time.Millisecond // a 404 of a required path is asked until the deadline
			}
			f, err := imds.Fetch(context.Background(), fast(s, timeout))
			if err == nil {
				t.Fatalf("Fetch = %+v, want an error", f)
			}
			msg := err.Error()
			if !strings.Contains(msg, "imds: "+tt.path+": ") || !strings.Contains(msg, tt.wantReason) {
				t.Errorf("error %q: want it to name %q and say %q", msg, tt.path, tt.wantReason)
			}
			var pe *imds.PathError
			if !errors.As(err, &pe) || pe.Path != tt.path {
				t.Errorf("error %q: want a *PathError for %q", msg, tt.path)
			}
		})
	}
}

func TestFetchDeadline(t *testing.T) {
	tests := []struct {
		name     string
		hang     string // path whose answers never come
		wantPath string // a path the error must name
	}{
		{"hung instance type", imds.PathInstanceType, imds.PathInstanceType},
		{"hung ipv6s", "latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/ipv6s",
			"latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/ipv6s"},
		{"hung token", "latest/api/token", imds.PathIdentityDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // most wait out a deadline
			s := startFake(t, imdstest.DefaultInstance())
			s.SetHang(tt.hang, true)
			done := make(chan error, 1)
			go func() {
				_, err := imds.Fetch(context.Background(), imds.Options{Endpoint: s.URL(), Timeout: 500 * time.Millisecond})
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil {
					t.Fatal("Fetch succeeded although a path hangs")
				}
				if !strings.Contains(err.Error(), "imds: "+tt.wantPath+": ") {
					t.Errorf("error %q does not name %q", err, tt.wantPath)
				}
			case <-time.After(30 * time.Second): // guard only: Fetch must not hang
				t.Fatal("Fetch still running 30s after a 500ms Timeout")
			}
		})
	}
}

func TestFetchUsesOneToken(t *testing.T) {
	s := startFake(t, imdstest.DefaultInstance())
	if _, err := imds.Fetch(context.Background(), imds.Options{Endpoint: s.URL(), Timeout: 30 * time.Second}); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	macs := "/latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/"
	wantGets := map[string]int{
		"/" + imds.PathIdentityDocument: 200, "/" + imds.PathDomain: 200, "/" + imds.PathInstanceType: 200,
		"/" + imds.PathInstanceID: 200, "/" + imds.PathAvailabilityZone: 200, "/" + imds.PathMAC: 200,
		"/" + imds.PathLocalIPv4: 200, "/" + imds.PathLocalHostname: 200,
		macs + "ipv6s": 404, macs + "vpc-ipv4-cidr-blocks": 200,
	}
	puts := 0
	gets := map[string]int{}
	for _, r := range s.Requests() {
		switch {
		case r.Method == "PUT" && r.Path == "/latest/api/token" && r.Status == 200:
			puts++
		case r.Method == "GET":
			if _, dup := gets[r.Path]; dup {
				t.Errorf("GET %s asked twice", r.Path)
			}
			gets[r.Path] = r.Status
		default:
			t.Errorf("unexpected request %+v", r)
		}
	}
	if puts != 1 {
		t.Errorf("%d token PUTs, want 1", puts)
	}
	if !reflect.DeepEqual(gets, wantGets) {
		t.Errorf("GETs (path: status) = %v\nwant %v", gets, wantGets)
	}
}

func TestFetchBadEndpoint(t *testing.T) {
	s := startFake(t, imdstest.DefaultInstance())
	for _, ep := range []string{"ftp://127.0.0.1:1", s.URL() + "/latest", "127.0.0.1:1338"} {
		t.Run(ep, func(t *testing.T) {
			_, err := imds.Fetch(context.Background(), imds.Options{Endpoint: ep, Timeout: 30 * time.Second})
			if err == nil || !strings.Contains(err.Error(), "imds: endpoint") {
				t.Errorf("Fetch with endpoint %q: error %v, want one naming the endpoint", ep, err)
			}
		})
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests reached the server, want none", n)
	}
}

func TestFetchServerGone(t *testing.T) {
	s, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	opts := fast(s, 300*time.Millisecond)
	opts.Endpoint = url
	_, err = imds.Fetch(context.Background(), opts)
	if err == nil || !strings.Contains(err.Error(), "imds: "+imds.PathIdentityDocument+": gave up at the 300ms deadline") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Fetch from a closed server: error %v, want one naming the path, the deadline and the refusal", err)
	}
}
