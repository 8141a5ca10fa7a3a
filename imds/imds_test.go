package imds_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/siminstance"
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

// docWith returns the default instance's identity document with key set to
// value (a string, or nil for JSON null).
func docWith(key string, value any) *string {
	var doc map[string]any
	if err := json.Unmarshal([]byte(siminstance.IdentityDocument(imdstest.DefaultInstance())), &doc); err != nil {
		panic(err)
	}
	doc[key] = value
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return str(string(b))
}

// withoutKeys returns the default instance's identity document lacking keys.
func withoutKeys(keys ...string) *string {
	return str(siminstance.IdentityDocument(imdstest.DefaultInstance(), keys...))
}

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
	ipv6 := func(in *imdstest.Instance) {
		in.IPv6s = []string{"2600:1f14:abcd:1200:1a2b:3c4d:5e6f:7a8b", "2600:1f14:abcd:1200::7"}
		in.VPCIPv6CIDRBlocks = []string{"2600:1f14:abcd:1200::/56"}
		in.VPCIPv4CIDRBlocks = []string{"192.168.0.0/16", "100.64.0.0/16"}
	}
	tests := []struct {
		name   string
		modify func(*imdstest.Instance)
		ipv6   bool              // Options.IPv6
		want   func(*imds.Facts) // changes from factsOf(instance)
	}{
		{name: "default instance"},
		{name: "ipv6 and two VPC CIDRs", modify: ipv6, ipv6: true},
		{
			name:   "ipv6 addresses not asked for",
			modify: ipv6,
			want:   func(f *imds.Facts) { f.IPv6s = nil },
		},
		{
			name: "china partition",
			modify: func(in *imdstest.Instance) {
				in.Region, in.AvailabilityZone, in.Domain = "cn-north-1", "cn-north-1a", "amazonaws.com.cn"
				in.InstanceType = "m5.xlarge"
			},
		},
		{
			name: "a document with only the region, optional paths answer 404",
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
			name: "document fields that are null are read from meta-data",
			modify: func(in *imdstest.Instance) {
				in.Overrides = map[string]*string{imds.PathIdentityDocument: str(`{"region": "us-west-2", "accountId": null,
					"instanceId": null, "instanceType": null, "availabilityZone": null, "privateIp": null}`)}
			},
			want: func(f *imds.Facts) { f.AccountID = "" },
		},
		{
			// The document is signed by AWS and is what nodeadm reads: where
			// meta-data says otherwise, it is not asked (TestFetchGETs).
			name: "the document's facts win over meta-data's",
			modify: func(in *imdstest.Instance) {
				in.Overrides = map[string]*string{
					imds.PathInstanceID:       str("i-0fffffffffffffff0"),
					imds.PathInstanceType:     str("c5.9xlarge"),
					imds.PathAvailabilityZone: str("us-west-2d"),
					imds.PathLocalIPv4:        str("10.9.9.9"),
				}
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
					imds.PathMAC:                  str("0a:1b:2c:3d:4e:5f\n"),
					imds.PathLocalHostname:        str("ip-192-168-45-67.ec2.internal example.com"),
					macs + "vpc-ipv4-cidr-blocks": str("192.168.0.0/16\n\n10.1.0.0/16\n"),
				}
			},
			want: func(f *imds.Facts) {
				f.LocalHostname = "ip-192-168-45-67.ec2.internal" // the first; TestFetchTakesTheFirstOfSeveralHostNames
				f.Warnings = []string{`IMDS latest/meta-data/local-hostname has 2 names ("ip-192-168-45-67.ec2.internal example.co"…(41 bytes)); using the first, "ip-192-168-45-67.ec2.internal"`}
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
			got, err := imds.Fetch(context.Background(), imds.Options{
				Endpoint: s.URL(), Timeout: 30 * time.Second,
				UserData: inst.UserData != "", IPv6: tt.ipv6,
			})
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
		absent     string  // a key the identity document lacks, so its path is read ("" none)
		path       string  // overridden path, and the path the error must name
		body       *string // nil: 404, retried until the deadline (the path may appear late)
		wantReason string
	}{
		{"vpc cidrs 404", "", macs + "vpc-ipv4-cidr-blocks", nil, "not found"},
		{"mac 404", "", imds.PathMAC, nil, "not found"},
		{"mac garbage", "", imds.PathMAC, str("0a:1b:2c"), "not a MAC address"},
		{"document 404", "", imds.PathIdentityDocument, nil, "not found"},
		{"document HTML", "", imds.PathIdentityDocument, &notFoundPage, "HTML page"},
		{"document not an object", "", imds.PathIdentityDocument, str(`["us-west-2"]`), "not a JSON object"},
		{"document broken JSON", "", imds.PathIdentityDocument, str(`{"region": "us-west-2"`), "identity document"},
		{"document without region", "", imds.PathIdentityDocument, str(`{"accountId": "111122223333"}`), "no region"},
		{"document region not a string", "", imds.PathIdentityDocument, str(`{"region": 5}`), "identity document"},
		{"document instance type garbage", "", imds.PathIdentityDocument, docWith("instanceType", "large m5"), "identity document instanceType: \"large m5\" is not an instance type"},
		{"document instance type not a string", "", imds.PathIdentityDocument, docWith("instanceType", 5), "identity document"},
		{"document instance id two words", "", imds.PathIdentityDocument, docWith("instanceId", "i-1 i-2"), "identity document instanceId"},
		{"document zone markup", "", imds.PathIdentityDocument, docWith("availabilityZone", "<b>us-west-2a</b>"), "identity document availabilityZone"},
		{"document private ip is ipv6", "", imds.PathIdentityDocument, docWith("privateIp", "fd00::1"), "identity document privateIp: \"fd00::1\" is not an IPv4 address"},
		{"document account garbage", "", imds.PathIdentityDocument, docWith("accountId", "1111 2222"), "identity document accountId"},
		{"instance type 404", "instanceType", imds.PathInstanceType, nil, "not found"},
		{"instance type HTML", "instanceType", imds.PathInstanceType, &notFoundPage, "HTML page"},
		{"instance type garbage", "instanceType", imds.PathInstanceType, str("large m5"), "not an instance type"},
		{"instance type empty", "instanceType", imds.PathInstanceType, str(""), "empty answer"},
		{"instance id 404", "instanceId", imds.PathInstanceID, nil, "not found"},
		{"instance id two lines", "instanceId", imds.PathInstanceID, str("i-1\ni-2"), "2 lines"},
		{"zone 404", "availabilityZone", imds.PathAvailabilityZone, nil, "not found"},
		{"zone blank", "availabilityZone", imds.PathAvailabilityZone, str(" \n"), "empty answer"},
		{"local ipv4 is ipv6", "privateIp", imds.PathLocalIPv4, str("fd00::1"), "not an IPv4 address"},
		{"local hostname HTML", "", imds.PathLocalHostname, &notFoundPage, "HTML page"},
		{"domain garbage", "", imds.PathDomain, str("amazonaws com"), "not a DNS name"},
		{"ipv6s hold ipv4", "", macs + "ipv6s", str("2600::1\n10.0.0.1"), "line 2"},
		{"cidr invalid", "", macs + "vpc-ipv4-cidr-blocks", str("10.0.0.0/33"), "not an IPv4 CIDR block"},
		{"cidr HTML", "", macs + "vpc-ipv4-cidr-blocks", &notFoundPage, "HTML page"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // most wait out a deadline
			inst := imdstest.DefaultInstance()
			inst.Overrides = map[string]*string{tt.path: tt.body}
			if tt.absent != "" {
				inst.Overrides[imds.PathIdentityDocument] = withoutKeys(tt.absent)
			}
			s := startFake(t, inst)
			timeout := 30 * time.Second // invalid answers fail after a few attempts
			if tt.body == nil {
				timeout = 300 * time.Millisecond // a 404 of a required path is asked until the deadline
			}
			opts := fast(s, timeout)
			opts.IPv6 = true
			f, err := imds.Fetch(context.Background(), opts)
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
		{"hung mac", imds.PathMAC, imds.PathMAC},
		{
			"hung ipv6s", "latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/ipv6s",
			"latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/ipv6s",
		},
		{"hung token", "latest/api/token", imds.PathIdentityDocument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // most wait out a deadline
			s := startFake(t, imdstest.DefaultInstance())
			s.SetHang(tt.hang, true)
			done := make(chan error, 1)
			go func() {
				_, err := imds.Fetch(context.Background(), imds.Options{Endpoint: s.URL(), Timeout: 500 * time.Millisecond, IPv6: true})
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

// TestFetchGETs: one token, and each path Fetch reads asked once: the identity
// document, then only what it lacks. A change that reads a fact twice, or from
// two places, fails here.
func TestFetchGETs(t *testing.T) {
	macs := "/latest/meta-data/network/interfaces/macs/0a:1b:2c:3d:4e:5f/"
	// What every Fetch of the default instance GETs, path: status.
	always := map[string]int{
		"/" + imds.PathIdentityDocument: 200, "/" + imds.PathMAC: 200, macs + "vpc-ipv4-cidr-blocks": 200,
		"/" + imds.PathDomain: 200, "/" + imds.PathLocalHostname: 200,
	}
	tests := []struct {
		name   string
		absent []string // keys the identity document lacks
		opts   imds.Options
		more   map[string]int // GETs besides always
	}{
		{name: "ipv4 node"},
		{name: "ipv6 node", opts: imds.Options{IPv6: true}, more: map[string]int{macs + "ipv6s": 404}},
		{name: "user data", opts: imds.Options{UserData: true}, more: map[string]int{"/" + imds.PathUserData: 404}},
		{
			name: "document without privateIp", absent: []string{"privateIp"}, opts: imds.Options{RequireLocalIPv4: true},
			more: map[string]int{"/" + imds.PathLocalIPv4: 200},
		},
		{
			name: "document without instance facts", absent: []string{"instanceId", "instanceType", "availabilityZone"},
			more: map[string]int{"/" + imds.PathInstanceID: 200, "/" + imds.PathInstanceType: 200, "/" + imds.PathAvailabilityZone: 200},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			if tt.absent != nil {
				inst.Overrides = map[string]*string{imds.PathIdentityDocument: withoutKeys(tt.absent...)}
			}
			s := startFake(t, inst)
			opts := tt.opts
			opts.Endpoint, opts.Timeout = s.URL(), 30*time.Second
			got, err := imds.Fetch(context.Background(), opts)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if want := factsOf(imdstest.DefaultInstance()); !reflect.DeepEqual(got, want) {
				t.Errorf("Fetch =\n %+v\nwant\n %+v", got, want)
			}
			wantGets := maps.Clone(always)
			maps.Copy(wantGets, tt.more)
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
		})
	}
}

// OnIdentity is called once, with the document's facts: "" for what it lacks,
// even where Fetch then reads it from meta-data.
func TestFetchOnIdentity(t *testing.T) {
	in := imdstest.DefaultInstance()
	full := imds.Identity{
		Region: in.Region, AccountID: in.AccountID, InstanceID: in.InstanceID,
		InstanceType: in.InstanceType, AvailabilityZone: in.AvailabilityZone, PrivateIP: in.LocalIPv4,
	}
	partial := full
	partial.InstanceID, partial.PrivateIP = "", ""
	for _, tt := range []struct {
		name   string
		absent []string
		want   imds.Identity
	}{
		{"whole document", nil, full},
		{"document without instanceId and privateIp", []string{"instanceId", "privateIp"}, partial},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			if tt.absent != nil {
				inst.Overrides = map[string]*string{imds.PathIdentityDocument: withoutKeys(tt.absent...)}
			}
			s := startFake(t, inst)
			var got []imds.Identity
			opts := fast(s, 30*time.Second)
			opts.OnIdentity = func(id imds.Identity) { got = append(got, id) }
			f, err := imds.Fetch(context.Background(), opts)
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if !reflect.DeepEqual(got, []imds.Identity{tt.want}) {
				t.Errorf("OnIdentity calls %+v, want one with %+v", got, tt.want)
			}
			if want := factsOf(in); !reflect.DeepEqual(f, want) {
				t.Errorf("Fetch =\n %+v\nwant\n %+v", f, want)
			}
		})
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
