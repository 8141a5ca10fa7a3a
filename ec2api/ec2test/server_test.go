package ec2test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/maxpods"
)

func newServer(t *testing.T) *Server {
	t.Helper()
	s, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	s.AddInstance("i-1", "ip-10-0-0-1.ec2.internal")
	s.AddInstance("i-2", "")
	s.Update(func(a *Answers) {
		a.Types["t3.micro"] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 2, IPv4PerENI: 2}
	})
	s.Update(func(a *Answers) {
		a.Types["m5.large"] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, ENIs: 3, IPv4PerENI: 10}
	})
	s.Update(func(a *Answers) { a.Types["c5.metal"] = maxpods.TypeInfo{ENIs: 15, IPv4PerENI: 50} })
	return s
}

func TestServer(t *testing.T) {
	const (
		xmlHead = `<?xml version="1.0" encoding="UTF-8"?>` + "\n"
		ns      = `xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"`
		res     = `<reservationId>r-0123456789abcdef0</reservationId><ownerId>111122223333</ownerId><groupSet></groupSet>`
		running = `<instanceState><code>16</code><name>running</name></instanceState>`
		t3micro = `<item><instanceType>t3.micro</instanceType><hypervisor>nitro</hypervisor>` +
			`<vCpuInfo><defaultVCpus>2</defaultVCpus></vCpuInfo><networkInfo><maximumNetworkInterfaces>2</maximumNetworkInterfaces>` +
			`<maximumNetworkCards>1</maximumNetworkCards><defaultNetworkCardIndex>0</defaultNetworkCardIndex><networkCards><item>` +
			`<networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>2</maximumNetworkInterfaces></item></networkCards>` +
			`<ipv4AddressesPerInterface>2</ipv4AddressesPerInterface></networkInfo></item>`
	)
	tests := []struct {
		name       string
		method     string
		path       string
		form       url.Values
		setup      func(*Server)
		wantStatus int
		wantBody   string // exact, with the request ID replaced by RID
	}{
		{
			name: "instance by id", form: url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {"i-1"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstancesResponse ` + ns + `><requestId>RID</requestId><reservationSet><item>` + res +
				`<instancesSet><item><instanceId>i-1</instanceId>` + running +
				`<privateDnsName>ip-10-0-0-1.ec2.internal</privateDnsName></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
		},
		{
			name: "instance with empty name", form: url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {"i-2"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstancesResponse ` + ns + `><requestId>RID</requestId><reservationSet><item>` + res +
				`<instancesSet><item><instanceId>i-2</instanceId>` + running +
				`<privateDnsName></privateDnsName></item></instancesSet></item></reservationSet></DescribeInstancesResponse>`,
		},
		{
			name: "filter matching nothing", form: url.Values{"Action": {"DescribeInstances"}, "Filter.1.Name": {"private-dns-name"}, "Filter.1.Value.1": {"x"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstancesResponse ` + ns + `><requestId>RID</requestId><reservationSet></reservationSet></DescribeInstancesResponse>`,
		},
		{
			name: "unknown instance", form: url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {"i-1"}, "InstanceId.2": {"i-9"}},
			wantStatus: 400, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidInstanceID.NotFound</Code>` +
				`<Message>The instance ID &#39;i-9&#39; does not exist</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "unknown filter", form: url.Values{"Action": {"DescribeInstances"}, "Filter.1.Name": {"tag:x"}, "Filter.1.Value.1": {"y"}},
			wantStatus: 400, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidParameterValue</Code>` +
				`<Message>The filter &#39;tag:x&#39; is invalid</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "set error", form: url.Values{"Action": {"DescribeInstances"}, "InstanceId.1": {"i-1"}},
			setup: func(s *Server) {
				s.Update(func(a *Answers) {
					a.Errors["DescribeInstances"] = Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized."}
				})
			},
			wantStatus: 403, wantBody: xmlHead + `<Response><Errors><Error><Code>UnauthorizedOperation</Code>` +
				`<Message>You are not authorized.</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "cleared error", form: url.Values{"Action": {"DescribeInstances"}, "Filter.1.Name": {"instance-id"}, "Filter.1.Value.1": {"nope"}},
			setup: func(s *Server) {
				s.Update(func(a *Answers) {
					a.Errors["DescribeInstances"] = Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized."}
				})
				s.Update(func(a *Answers) { delete(a.Errors, "DescribeInstances") })
			},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstancesResponse ` + ns + `><requestId>RID</requestId><reservationSet></reservationSet></DescribeInstancesResponse>`,
		},
		{
			name: "instance type", form: url.Values{"Action": {"DescribeInstanceTypes"}, "InstanceType.1": {"t3.micro"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstanceTypesResponse ` + ns + `><requestId>RID</requestId><instanceTypeSet>` +
				t3micro + `</instanceTypeSet></DescribeInstanceTypesResponse>`,
		},
		{
			name: "type without hypervisor and vcpus", form: url.Values{"Action": {"DescribeInstanceTypes"}, "Filter.1.Name": {"instance-type"}, "Filter.1.Value.1": {"*.metal"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstanceTypesResponse ` + ns + `><requestId>RID</requestId><instanceTypeSet>` +
				`<item><instanceType>c5.metal</instanceType><networkInfo><maximumNetworkInterfaces>15</maximumNetworkInterfaces>` +
				`<maximumNetworkCards>1</maximumNetworkCards><defaultNetworkCardIndex>0</defaultNetworkCardIndex><networkCards><item>` +
				`<networkCardIndex>0</networkCardIndex><maximumNetworkInterfaces>15</maximumNetworkInterfaces></item></networkCards>` +
				`<ipv4AddressesPerInterface>50</ipv4AddressesPerInterface></networkInfo></item></instanceTypeSet></DescribeInstanceTypesResponse>`,
		},
		{
			name: "type filter matching nothing", form: url.Values{"Action": {"DescribeInstanceTypes"}, "Filter.1.Name": {"instance-type"}, "Filter.1.Value.1": {"m5.*x*"}},
			wantStatus: 200, wantBody: xmlHead + `<DescribeInstanceTypesResponse ` + ns + `><requestId>RID</requestId><instanceTypeSet></instanceTypeSet></DescribeInstanceTypesResponse>`,
		},
		{
			name: "unknown instance types", form: url.Values{"Action": {"DescribeInstanceTypes"}, "InstanceType.2": {"m5.larg"}, "InstanceType.1": {"x1"}, "InstanceType.3": {"t3.micro"}},
			wantStatus: 400, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidInstanceType</Code>` +
				`<Message>The following supplied instance types do not exist: [x1, m5.larg]</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "unknown action", form: url.Values{"Action": {"RunInstances"}},
			wantStatus: 400, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidAction</Code>` +
				`<Message>The action RunInstances is not valid for this web service.</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "wrong path", path: "/x", form: url.Values{"Action": {"DescribeInstances"}},
			wantStatus: 404, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidAction</Code>` +
				`<Message>no such path /x</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
		{
			name: "GET", method: "GET", form: url.Values{"Action": {"DescribeInstances"}},
			wantStatus: 405, wantBody: xmlHead + `<Response><Errors><Error><Code>InvalidAction</Code>` +
				`<Message>method GET is not supported; use POST</Message></Error></Errors><RequestID>RID</RequestID></Response>`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			if tc.setup != nil {
				tc.setup(s)
			}
			status, body := do(t, s, tc.method, tc.path, tc.form)
			if status != tc.wantStatus {
				t.Errorf("status = %d, want %d", status, tc.wantStatus)
			}
			body = strings.Replace(body, "00000000-0000-4000-8000-000000000001", "RID", 1)
			if body != tc.wantBody {
				t.Errorf("body:\n got %s\nwant %s", body, tc.wantBody)
			}
			if action := tc.form.Get("Action"); s.Calls(action) != 1 {
				t.Errorf("Calls(%q) = %d, want 1", action, s.Calls(action))
			}
		})
	}
}

func TestCallsAndListing(t *testing.T) {
	s := newServer(t)
	for range 2 {
		do(t, s, "", "", url.Values{"Action": {"DescribeInstanceTypes"}})
	}
	if got := s.Calls("DescribeInstanceTypes"); got != 2 {
		t.Errorf("Calls(DescribeInstanceTypes) = %d, want 2", got)
	}
	if got := s.Calls("DescribeInstances"); got != 0 {
		t.Errorf("Calls(DescribeInstances) = %d, want 0", got)
	}
	_, body := do(t, s, "", "", url.Values{"Action": {"DescribeInstanceTypes"}})
	var order []string
	for _, part := range strings.Split(body, "<instanceType>")[1:] {
		name, _, _ := strings.Cut(part, "<")
		order = append(order, name)
	}
	if got, want := strings.Join(order, " "), "c5.metal m5.large t3.micro"; got != want {
		t.Errorf("listing without names: got %q, want %q (sorted)", got, want)
	}
}

// do sends a request (POST / with form as the body unless told otherwise) and
// returns the status and body.
func do(t *testing.T, s *Server, method, path string, form url.Values) (int, string) {
	t.Helper()
	if method == "" {
		method = http.MethodPost
	}
	u := s.URL() + path
	if path == "" {
		u += "/"
	}
	var body io.Reader
	if method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	} else {
		u += "?" + form.Encode()
	}
	req, err := http.NewRequest(method, u, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/xml;charset=UTF-8" {
		t.Errorf("Content-Type = %q, want text/xml;charset=UTF-8", ct)
	}
	return resp.StatusCode, string(b)
}
