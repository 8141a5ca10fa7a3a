package doctor

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/yamljson"
	"github.com/eksboot/eksboot/kubeletconf"
)

const apiGroup = "API server"

// KubeconfigPath is the kubelet's kubeconfig, which eksboot writes.
const KubeconfigPath = "/var/lib/kubelet/kubeconfig"

// Clock skew bounds: SigV4 (the IAM authenticator's token is a presigned STS
// request) allows five minutes; beyond a minute is worth a warning.
const (
	skewWarn = time.Minute
	skewFail = 5 * time.Minute
)

// kubeconfig is the part of the kubelet's kubeconfig the checks read.
type kubeconfig struct {
	Clusters []struct {
		Cluster struct {
			Server               string `json:"server"`
			CertificateAuthority string `json:"certificate-authority"`
		} `json:"cluster"`
	} `json:"clusters"`
	Users []struct {
		Name string `json:"name"`
		User struct {
			Exec *execConfig `json:"exec"`
			// ClientCertificate is the client certificate's file (a local cluster's
			// kubelet, after its TLS bootstrap).
			ClientCertificate string `json:"client-certificate"`
		} `json:"user"`
	} `json:"users"`
}

// execConfig is a kubeconfig's exec credential plugin.
type execConfig struct {
	APIVersion string   `json:"apiVersion"`
	Command    string   `json:"command"`
	Args       []string `json:"args"`
	Env        []struct {
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"env"`
}

// checkAPIServer: the endpoint of the kubelet's kubeconfig resolves, connects, and
// verifies with the node's CA; the clock agrees with the API server's.
func (d *run) checkAPIServer() {
	b, err := d.env.Files.ReadFileLimit(KubeconfigPath, 1<<20)
	if err != nil {
		d.add(apiGroup, "api.kubeconfig", Fail, fmt.Sprintf("the kubelet's kubeconfig: %v", err),
			"Run eksboot again: it writes "+KubeconfigPath+".")
		return
	}
	var kc kubeconfig
	if err := yamljson.Unmarshal(b, &kc); err != nil || len(kc.Clusters) == 0 || kc.Clusters[0].Cluster.Server == "" {
		d.add(apiGroup, "api.kubeconfig", Fail, KubeconfigPath+" names no API server", "Run eksboot again: it rewrites "+KubeconfigPath+".")
		return
	}
	d.facts.kubeconfig = &kc
	server := kc.Clusters[0].Cluster.Server
	u, err := url.Parse(server)
	if err != nil || u.Scheme != "https" || u.Hostname() == "" {
		d.add(apiGroup, "api.kubeconfig", Fail, fmt.Sprintf("%s: the server %s is not an https URL", KubeconfigPath, d.quote(server)), "Run eksboot again with the cluster's endpoint.")
		return
	}
	host, port := u.Hostname(), cmpOr(u.Port(), "443")
	d.facts.serverHost, d.facts.serverPort = host, port

	// DNS.
	addrs := []string{host}
	chain := []string{"api.tcp", "api.tls", "api.clock"}
	if net.ParseIP(host) == nil {
		chain = append([]string{"api.dns"}, chain...)
	}
	if d.late(apiGroup, chain...) {
		return
	}
	if net.ParseIP(host) == nil {
		ctx, cancel := d.checkCtx()
		addrs, err = d.env.Resolver.LookupHost(ctx, host)
		cancel()
		if err != nil || len(addrs) == 0 {
			d.addOrCut(apiGroup, "api.dns", Fail, fmt.Sprintf("%s does not resolve: %v", host, errOrNil(err)),
				"Check the VPC's DNS settings (enableDnsHostnames and enableDnsSupport) and, for a private endpoint, that the node uses the VPC's resolver.")
			return
		}
		d.add(apiGroup, "api.dns", OK, fmt.Sprintf("%s resolves to %v", host, addrs), "")
	}

	// TCP.
	if d.late(apiGroup, chain[len(chain)-3:]...) {
		return
	}
	addr := net.JoinHostPort(addrs[0], port)
	ctx, cancel := d.checkCtx()
	defer cancel()
	conn, err := d.env.Dialer.DialContext(ctx, "tcp", addr)
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		d.addOrCut(apiGroup, "api.tcp", Fail, fmt.Sprintf("no answer from %s within %s", addr, d.o.CheckTimeout),
			"Check the security groups (the cluster security group must allow 443 from the node), the network ACLs and routes of the node's subnet, and the endpoint's access: a node without a route to the public endpoint needs private endpoint access.")
		return
	case err != nil && errors.Is(err, syscall.ECONNREFUSED):
		d.add(apiGroup, "api.tcp", Fail, fmt.Sprintf("%s refuses connections: nothing listens there", addr),
			"Check that the endpoint in the user data is the cluster's (aws eks describe-cluster --query cluster.endpoint).")
		return
	case err != nil:
		d.addOrCut(apiGroup, "api.tcp", Fail, fmt.Sprintf("connect to %s: %v", addr, err),
			"Check the node's routes and security groups toward the API server.")
		return
	}
	defer conn.Close()
	d.add(apiGroup, "api.tcp", OK, "connected to "+addr, "")

	// TLS with the node's CA.
	caPath := cmpOr(kc.Clusters[0].Cluster.CertificateAuthority, kubeletconf.DefaultCAFile)
	pool, caName, err := d.readCA(caPath)
	if err != nil {
		d.add(apiGroup, "api.tls", Fail, err.Error(), "Run eksboot again with the cluster's CA (--b64-cluster-ca or spec.cluster.certificateAuthority).")
		return
	}
	now := d.env.now()
	tc := tls.Client(conn, &tls.Config{RootCAs: pool, ServerName: host, Time: d.env.now, MinVersion: tls.VersionTLS12})
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	err = tc.HandshakeContext(ctx)
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostErr x509.HostnameError
	switch {
	case err == nil:
	case errors.As(err, &unknown):
		// Every EKS cluster's CA is named "kubernetes": the key IDs tell them apart.
		issuer := ""
		if c := unknown.Cert; c != nil {
			issuer = fmt.Sprintf(" (issued by %s, authority key ID %s)", d.quote(c.Issuer.String()), keyID(c.AuthorityKeyId))
		}
		d.add(apiGroup, "api.tls", Fail, fmt.Sprintf("the API server's certificate%s is not signed by the node's CA %s: the CA in the user data belongs to another cluster", issuer, caName),
			"Give the node this cluster's CA (aws eks describe-cluster --name <cluster> --query cluster.certificateAuthority.data) in its user data and run eksboot again.")
		return
	case errors.As(err, &hostErr):
		d.add(apiGroup, "api.tls", Fail, fmt.Sprintf("the API server's certificate is not for %s: the endpoint in the user data is another server's", host),
			"Check the endpoint in the user data against aws eks describe-cluster --query cluster.endpoint.")
		return
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		d.add(apiGroup, "api.tls", Fail, fmt.Sprintf("the API server's certificate is not valid at the node's time %s: %v", now.UTC().Format(time.RFC3339), err),
			"Check the node's clock (chronyd or systemd-timesyncd, the Amazon Time Sync Service at 169.254.169.123).")
		return
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		d.addOrCut(apiGroup, "api.tls", Fail, fmt.Sprintf("%s accepts TCP but the TLS handshake got no answer within %s", addr, d.o.CheckTimeout),
			"Something between the node and the API server holds the connection (a proxy, a firewall appliance, an overloaded endpoint): check the route to the endpoint and any HTTPS proxy.")
		return
	default:
		d.addOrCut(apiGroup, "api.tls", Fail, fmt.Sprintf("TLS with %s: %v", addr, err), "Check the endpoint and the CA in the user data.")
		return
	}
	d.facts.tlsOK, d.facts.caPool, d.facts.serverAddr = true, pool, addr
	d.add(apiGroup, "api.tls", OK, fmt.Sprintf("the API server's certificate verifies with the node's CA %s", caName), "")

	// The clock, against the API server's Date header.
	d.checkClock(tc, host)
}

// readCA reads the node's CA bundle: a pool, and the CA named by its subject and
// digest (never its body).
func (d *run) readCA(p string) (*x509.CertPool, string, error) {
	b, err := d.env.Files.ReadFileLimit(p, 1<<20)
	if err != nil {
		return nil, "", fmt.Errorf("the node's CA: %v", err)
	}
	pool := x509.NewCertPool()
	var name string
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			continue
		}
		pool.AddCert(c)
		if name == "" {
			sum := sha256.Sum256(c.Raw)
			name = fmt.Sprintf("%s (%s, key ID %s, sha256 %x…)", quote.Value(c.Subject.CommonName), p, keyID(c.SubjectKeyId), sum[:6])
		}
	}
	if name == "" {
		return nil, "", fmt.Errorf("the node's CA %s holds no certificate (not shown)", p)
	}
	return pool, name, nil
}

// maxAnswerHeader bounds the status line and headers of an API server's answer that
// doctor reads (the transport's MaxResponseHeaderBytes, and the reader of /version):
// an API server sends a few hundred bytes.
const maxAnswerHeader = 64 << 10

// checkClock asks /version over the verified connection and compares its Date with
// the node's clock. Only the status line and headers are read, at most
// maxAnswerHeader bytes of them.
func (d *run) checkClock(tc *tls.Conn, host string) {
	req, _ := http.NewRequest(http.MethodGet, "https://"+host+"/version", nil)
	req.Header.Set("Connection", "close")
	sent := d.env.now()
	var resp *http.Response
	err := req.Write(tc)
	lim := &io.LimitedReader{R: tc, N: maxAnswerHeader}
	if err == nil {
		resp, err = http.ReadResponse(bufio.NewReaderSize(lim, 4<<10), req)
	}
	if err != nil && lim.N == 0 {
		d.add(apiGroup, "api.clock", Fail, "the API server's answer to GET /version has more than 64 KiB of headers; doctor stopped reading: what answers there is no Kubernetes API server",
			"Check what listens on the endpoint (a proxy or a TLS-intercepting appliance with the node's CA) and the endpoint in the user data.")
		return
	}
	if err != nil {
		d.addOrCut(apiGroup, "api.clock", Warn, fmt.Sprintf("the API server did not answer GET /version: %v", err), "Look at the API server checks above; the clock was not compared.")
		return
	}
	resp.Body.Close()
	at, err := http.ParseTime(resp.Header.Get("Date"))
	if err != nil {
		d.add(apiGroup, "api.clock", Warn, "the API server's answer has no Date header; the clock was not compared", "")
		return
	}
	// Date has one-second precision and is stamped while we wait: compare it with the
	// middle of the exchange.
	got := d.env.now()
	mid := sent.Add(got.Sub(sent) / 2)
	skew := mid.Sub(at).Round(time.Second)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	what := fmt.Sprintf("the node's clock is %s %s the API server's", abs, map[bool]string{true: "ahead of", false: "behind"}[skew >= 0])
	switch {
	case abs >= skewFail:
		d.add(apiGroup, "api.clock", Fail, what+": SigV4 (the IAM token) allows 5 minutes, and TLS certificates look expired or not yet valid",
			"Fix the clock: enable chronyd or systemd-timesyncd with the Amazon Time Sync Service (169.254.169.123).")
	case abs >= skewWarn:
		d.add(apiGroup, "api.clock", Warn, what, "Check chronyd or systemd-timesyncd: the node's clock drifts.")
	default:
		d.add(apiGroup, "api.clock", OK, what+fmt.Sprintf(" (within %s)", skewWarn), "")
	}
}

// keyID shows a certificate key ID by its first bytes.
func keyID(id []byte) string {
	if len(id) == 0 {
		return "none"
	}
	return fmt.Sprintf("%x…", id[:min(len(id), 6)])
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, os.ErrDeadlineExceeded)
}
