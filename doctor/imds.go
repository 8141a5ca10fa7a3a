package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"time"

	"github.com/eksboot/eksboot/internal/strictjson"
)

// DefaultIMDSEndpoint is the instance metadata service's address.
const DefaultIMDSEndpoint = "http://169.254.169.254"

// imdsLimit bounds one IMDS answer (the identity document is the largest read).
const imdsLimit = 32 << 10

// HTTPIMDS speaks IMDSv2 over HTTP itself rather than through the SDK's client: the
// checks must tell a refused token (403) from an unreachable service from a missing
// path, and the hop limit is read from the token answer's own packets. No redirect
// is followed and every answer is read through a limit, as in package imds.
type HTTPIMDS struct {
	URL    string // base URL, DefaultIMDSEndpoint when empty
	client *http.Client
	// hops measures the IP TTL of the token answer (nil: not measured).
	hops func(remote *net.TCPAddr) (hopProbe, error)
}

// hopProbe watches one connection's incoming packets.
type hopProbe interface {
	// TTL returns the lowest TTL of the data packets seen from the peer to local.
	TTL(local *net.TCPAddr) (int, error)
	Close()
}

// NewHTTPIMDS returns the client for endpoint ("" the default address).
func NewHTTPIMDS(endpoint string) *HTTPIMDS {
	if endpoint == "" {
		endpoint = DefaultIMDSEndpoint
	}
	tr := &http.Transport{Proxy: nil, DisableKeepAlives: true, MaxResponseHeaderBytes: 16 << 10}
	return &HTTPIMDS{
		URL:  strings.TrimRight(endpoint, "/"),
		hops: newHopProbe,
		client: &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("IMDS answered with a redirect; not followed")
		}},
	}
}

// Endpoint is the base URL.
func (c *HTTPIMDS) Endpoint() string { return c.URL }

// Token asks for a session token of 60 s, measuring the hop limit on the way.
func (c *HTTPIMDS) Token(ctx context.Context) (TokenAnswer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, c.URL+"/latest/api/token", nil)
	if err != nil {
		return TokenAnswer{}, err
	}
	req.Header.Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", "60")
	var probe hopProbe
	var note string
	var local *net.TCPAddr
	if remote, err := tcpAddrOf(c.URL); err != nil {
		note = err.Error()
	} else if c.hops == nil {
		note = "not measured"
	} else if probe, err = c.hops(remote); err != nil {
		note = err.Error()
	} else {
		defer probe.Close()
	}
	trace := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) {
		local, _ = i.Conn.LocalAddr().(*net.TCPAddr)
	}}
	resp, err := c.client.Do(req.WithContext(httptrace.WithClientTrace(ctx, trace)))
	if err != nil {
		return TokenAnswer{}, unwrapURL(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, imdsLimit))
	if err != nil {
		return TokenAnswer{Status: resp.StatusCode}, err
	}
	a := TokenAnswer{Status: resp.StatusCode, HopNote: note}
	if resp.StatusCode == http.StatusOK {
		a.Token = strings.TrimSpace(string(body))
	}
	if probe != nil && local != nil {
		if a.HopLimit, err = probe.TTL(local); err != nil {
			a.HopNote = err.Error()
		}
	}
	return a, nil
}

// Get reads path with the token.
func (c *HTTPIMDS) Get(ctx context.Context, token, path string) (string, int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.URL+"/"+strings.TrimLeft(path, "/"), nil)
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("X-Aws-Ec2-Metadata-Token", token)
	resp, err := c.client.Do(req)
	if err != nil {
		return "", 0, unwrapURL(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, imdsLimit+1))
	if err == nil && len(body) > imdsLimit {
		err = fmt.Errorf("%s: answer larger than %d bytes", path, imdsLimit)
	}
	return string(body), resp.StatusCode, err
}

// unwrapURL drops net/url's "Put \"http://...\":" wrapping.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// tcpAddrOf is the IPv4 address and port of an http URL with a literal address.
func tcpAddrOf(base string) (*net.TCPAddr, error) {
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	a, err := net.ResolveTCPAddr("tcp4", net.JoinHostPort(u.Hostname(), port))
	if err != nil || a.IP.To4() == nil {
		return nil, fmt.Errorf("not measured (the endpoint %s is not an IPv4 address)", u.Host)
	}
	return a, nil
}

// credentials is the answer of iam/security-credentials/<role>.
type credentials struct {
	Code            string    `json:"Code"`
	Message         string    `json:"Message"`
	AccessKeyID     string    `json:"AccessKeyId"`
	SecretAccessKey string    `json:"SecretAccessKey"`
	Token           string    `json:"Token"`
	Expiration      time.Time `json:"Expiration"`
}

const (
	imdsGroup = "IMDS"
	// credentialsSoon is how close to its expiry a credential is a warning: IMDS
	// hands out new ones at least five minutes before the old ones expire.
	credentialsSoon = 5 * time.Minute
)

// checkIMDS: reachable, a token granted, the hop limit, the instance profile's
// credentials.
func (d *run) checkIMDS() {
	ep := d.env.IMDS.Endpoint()
	if d.late(imdsGroup, "imds.token", "imds.hop-limit", "imds.credentials") {
		return
	}
	ctx, cancel := d.checkCtx()
	defer cancel()
	start := d.env.now()
	tok, err := d.env.IMDS.Token(ctx)
	took := d.env.now().Sub(start).Round(time.Millisecond)
	switch {
	case err != nil && errors.Is(err, context.DeadlineExceeded):
		d.addOrCut(imdsGroup, "imds.token", Fail, fmt.Sprintf("no answer from %s within %s", ep, d.o.CheckTimeout),
			"Check the instance's metadata options (aws ec2 describe-instances --query 'Reservations[].Instances[].MetadataOptions') and that no firewall rule on the node drops 169.254.169.254.")
		return
	case err != nil:
		d.addOrCut(imdsGroup, "imds.token", Fail, fmt.Sprintf("%s unreachable: %v", ep, err),
			"Check that the instance's metadata service is enabled (--http-endpoint enabled) and that no firewall rule on the node drops 169.254.169.254.")
		return
	case tok.Status == http.StatusForbidden:
		d.add(imdsGroup, "imds.token", Fail, fmt.Sprintf("%s refuses a session token (HTTP 403): the metadata service is turned off for this instance", ep),
			"Turn it on: aws ec2 modify-instance-metadata-options --instance-id <id> --http-endpoint enabled --http-tokens required.")
		return
	case tok.Status != http.StatusOK || tok.Token == "":
		d.add(imdsGroup, "imds.token", Fail, fmt.Sprintf("%s answers the token request with HTTP %d, no IMDSv2 token", ep, tok.Status),
			"Check what answers on the metadata address (a proxy or an iptables redirect in front of IMDS) and the instance's metadata options.")
		return
	}
	d.secret(tok.Token)
	get := func(p string) (string, int, error) {
		ctx, cancel := d.checkCtx()
		defer cancel()
		return d.env.IMDS.Get(ctx, tok.Token, p)
	}
	var doc struct {
		InstanceID, InstanceType, Region, AccountID string
	}
	body, status, err := get("latest/dynamic/instance-identity/document")
	if err == nil && status == http.StatusOK {
		var raw struct {
			InstanceID   string `json:"instanceId"`
			InstanceType string `json:"instanceType"`
			Region       string `json:"region"`
			AccountID    string `json:"accountId"`
		}
		if strictjson.Unmarshal([]byte(body), &raw, answerLimits) == nil {
			doc.InstanceID, doc.InstanceType, doc.Region, doc.AccountID = raw.InstanceID, raw.InstanceType, raw.Region, raw.AccountID
		}
	}
	f := &d.facts
	f.instanceID, f.instanceType, f.region, f.accountID = doc.InstanceID, doc.InstanceType, doc.Region, doc.AccountID
	if p, st, err := get("latest/meta-data/services/partition"); err == nil && st == http.StatusOK {
		f.partition = strings.TrimSpace(p)
	}
	who := "the instance identity document is unreadable"
	if f.instanceID != "" {
		who = fmt.Sprintf("%s, %s in %s", f.instanceID, f.instanceType, f.region)
	}
	d.add(imdsGroup, "imds.token", OK, fmt.Sprintf("IMDSv2 token granted by %s in %s; %s", ep, took, who), "")

	switch {
	case tok.HopLimit == 0:
		d.add(imdsGroup, "imds.hop-limit", Warn, "hop limit not measured: "+tok.HopNote,
			"Run eksboot doctor as root to measure it, or read HttpPutResponseHopLimit with aws ec2 describe-instances.")
	case tok.HopLimit < 2:
		d.add(imdsGroup, "imds.hop-limit", Warn,
			fmt.Sprintf("hop limit %d: only host-network pods (aws-node, kube-proxy) get an IMDSv2 token; a pod in its own network namespace that reads IMDS times out", tok.HopLimit),
			fmt.Sprintf("If pods need IMDS (an AWS SDK without IRSA or Pod Identity): aws ec2 modify-instance-metadata-options --instance-id %s --http-put-response-hop-limit 2.", cmpOr(f.instanceID, "<id>")))
	default:
		d.add(imdsGroup, "imds.hop-limit", OK, fmt.Sprintf("hop limit %d: pods in their own network namespace can get an IMDSv2 token", tok.HopLimit), "")
	}
	d.checkCredentials(get)
}

// answerLimits bound a JSON document doctor reads from outside (IMDS, a
// credential plugin's ExecCredential, the API server's token review); a key
// given twice is refused too (strictjson).
var answerLimits = strictjson.Limits{Bytes: 1 << 20, Values: 10_000}

// checkCredentials: the instance profile's role and its credentials.
func (d *run) checkCredentials(get func(string) (string, int, error)) {
	const base = "latest/meta-data/iam/security-credentials/"
	body, status, err := get(base)
	switch {
	case err != nil:
		d.addOrCut(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("%s: %v", base, err), "Check the metadata service (see imds.token).")
		return
	case status == http.StatusNotFound:
		d.add(imdsGroup, "imds.credentials", Fail, "no instance profile: "+base+" answers 404, so the kubelet's credential plugin has no credentials",
			"Attach the node role's instance profile: aws ec2 associate-iam-instance-profile --instance-id <id> --iam-instance-profile Name=<profile>.")
		return
	case status != http.StatusOK:
		d.add(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("%s answers HTTP %d", base, status), "Check the metadata service and the instance profile.")
		return
	}
	role := strings.TrimSpace(strings.SplitN(body, "\n", 2)[0])
	d.facts.role = role
	body, status, err = get(base + role)
	if err != nil || status != http.StatusOK {
		d.addOrCut(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("role %s: its credentials answer HTTP %d %v", d.quote(role), status, errOrNil(err)),
			"Check the instance profile's role: it must exist and trust ec2.amazonaws.com.")
		return
	}
	var c credentials
	if err := strictjson.Unmarshal([]byte(body), &c, answerLimits); err != nil {
		why := "are not JSON"
		var se *strictjson.Error
		if errors.As(err, &se) {
			why = "are not strict JSON: " + se.Error()
		}
		d.add(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("role %s: the credentials %s", d.quote(role), why), "Check what answers on the metadata address.")
		return
	}
	d.secret(c.AccessKeyID)
	d.secret(c.SecretAccessKey)
	d.secret(c.Token)
	now := d.env.now()
	switch left := c.Expiration.Sub(now); {
	case c.Code != "Success":
		d.add(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("role %s: IMDS says %s: %s", d.quote(role), d.quote(c.Code), d.quote(c.Message)),
			"Check the role's trust policy (ec2.amazonaws.com must be allowed to assume it) and that the role still exists.")
	case c.AccessKeyID == "" || c.SecretAccessKey == "":
		d.add(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("role %s: the answer has no access key", d.quote(role)), "Check what answers on the metadata address.")
	case left <= 0:
		d.add(imdsGroup, "imds.credentials", Fail, fmt.Sprintf("role %s: credentials expired at %s (the node's clock says %s)", d.quote(role), c.Expiration.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)),
			"Check the node's clock (see api.clock); IMDS renews credentials before they expire.")
	case left < credentialsSoon:
		d.add(imdsGroup, "imds.credentials", Warn, fmt.Sprintf("role %s: credentials expire in %s", d.quote(role), left.Round(time.Second)),
			"IMDS should have renewed them by now: check the node's clock (see api.clock).")
	default:
		d.add(imdsGroup, "imds.credentials", OK, fmt.Sprintf("role %s (%s): credentials valid until %s", d.quote(role), d.facts.roleARN(), c.Expiration.UTC().Format(time.RFC3339)), "")
	}
}

func errOrNil(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
