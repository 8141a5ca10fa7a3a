package doctor

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// The fake cluster's names.
const (
	apiHost     = "0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com"
	clusterName = "doctor-test"
	roleName    = "eks-node-role"
	nodeToken   = "k8s-aws-v1.aHR0cHM6Ly9zdHMudXMtd2VzdC0yLmFtYXpvbmF3cy5jb20vP0FjdGlvbj1HZXRDYWxsZXJJZGVudGl0eQ"
	accessKey   = "ASIAEXAMPLEEXAMPLE12"
	secretKey   = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	sessionTok  = "IQoJb3JpZ2luX2VjEXAMPLESESSIONTOKEN0123456789"
)

// ca is a throw-away certificate authority that can sign serving certificates.
type ca struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, cn string) *ca {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(48 * time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	return &ca{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// serving returns a certificate for the API server's host and 127.0.0.1.
func (c *ca) serving(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "kube-apiserver"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(48 * time.Hour),
		DNSNames: []string{apiHost}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.cert, &key.PublicKey, c.key)
	must(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// apiServer is a fake API server on 127.0.0.1: /version, and SelfSubjectReview
// answering 201 for nodeToken, 401 for anything else.
type apiServer struct {
	*httptest.Server
	mu       sync.Mutex
	refuse   bool // answer 401 whatever the token
	sawToken bool
	// user and groups replace the node's in the token review's answer.
	user   string
	groups []string
}

func startAPIServer(t *testing.T, signer *ca) *apiServer {
	t.Helper()
	a := &apiServer{}
	a.Server = httptest.NewUnstartedServer(http.HandlerFunc(a.serve))
	a.TLS = &tls.Config{Certificates: []tls.Certificate{signer.serving(t)}}
	a.Config.ErrorLog = log.New(io.Discard, "", 0) // the tests cut handshakes on purpose
	a.StartTLS()
	t.Cleanup(a.Close)
	return a
}

func (a *apiServer) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/version":
		fmt.Fprint(w, `{"major":"1","minor":"33","gitVersion":"v1.33.0"}`)
	case "/apis/authentication.k8s.io/v1/selfsubjectreviews":
		a.mu.Lock()
		refuse := a.refuse
		a.sawToken = r.Header.Get("Authorization") == "Bearer "+nodeToken
		a.mu.Unlock()
		if refuse || r.Header.Get("Authorization") != "Bearer "+nodeToken {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"kind":"Status","status":"Failure","message":"Unauthorized","code":401}`)
			return
		}
		a.mu.Lock()
		user, groups := a.user, a.groups
		a.mu.Unlock()
		if user == "" {
			user, groups = "system:node:ip-192-168-45-67.us-west-2.compute.internal", []string{"system:bootstrappers", "system:nodes", "system:authenticated"}
		}
		var rev struct {
			Kind   string `json:"kind"`
			Status struct {
				UserInfo struct {
					Username string   `json:"username"`
					Groups   []string `json:"groups"`
				} `json:"userInfo"`
			} `json:"status"`
		}
		rev.Kind, rev.Status.UserInfo.Username, rev.Status.UserInfo.Groups = "SelfSubjectReview", user, groups
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(rev)
	default:
		http.NotFound(w, r)
	}
}

func (a *apiServer) port() string {
	_, p, _ := net.SplitHostPort(a.Listener.Addr().String())
	return p
}

// hangingServer accepts TCP connections on 127.0.0.1 and never answers.
func hangingServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	done := make(chan struct{})
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p
}

// criServer is a fake CRI runtime: RuntimeService.Version over HTTP/2 without TLS on
// a unix socket, as containerd serves it.
func criServer(t *testing.T, sock string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(sock), 0o755))
	ln, err := net.Listen("unix", sock)
	must(t, err)
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protocols, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != criVersionMethod || r.Header.Get("Content-Type") != "application/grpc" {
			w.Header().Set("Grpc-Status", "12")
			return
		}
		var msg []byte
		for i, s := range []string{"0.1.0", "containerd", "v1.7.27", "v1"} {
			msg = append(msg, byte((i+1)<<3|2), byte(len(s)))
			msg = append(msg, s...)
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		frame := append([]byte{0, 0, 0, 0, byte(len(msg))}, msg...)
		_, _ = w.Write(frame)
		w.Header().Set("Grpc-Status", "0")
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
}

// node is a test node: a root with what eksboot writes, and the fakes around it.
type node struct {
	t       *testing.T
	dir     string
	root    *rootfs.Root
	imds    *imdstest.Server
	api     *apiServer
	ca      *ca
	env     *Env
	units   *fakeUnits
	journal *fakeJournal
	statfs  *fakeStatfs
	now     time.Time
	skew    time.Duration // the node's clock minus the true time
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// pluginScript is the IAM authenticator stand-in: an ExecCredential with nodeToken.
const pluginScript = `#!/bin/sh
printf '{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1","spec":{},"status":{"token":"%s","expirationTimestamp":"2099-01-01T00:00:00Z"}}\n' '` + nodeToken + `'
`

// newNode makes a healthy node: every check ok.
func newNode(t *testing.T) *node {
	t.Helper()
	n := &node{t: t, dir: t.TempDir(), now: time.Now()}
	var err error
	n.root, err = rootfs.New(n.dir)
	must(t, err)

	n.ca = newCA(t, "kubernetes")
	n.api = startAPIServer(t, n.ca)

	inst := imdstest.DefaultInstance()
	n.imds, err = imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { n.imds.Close() })
	role := roleName
	creds := fmt.Sprintf(`{"Code":"Success","LastUpdated":"%s","Type":"AWS-HMAC","AccessKeyId":"%s","SecretAccessKey":"%s","Token":"%s","Expiration":"%s"}`,
		n.now.UTC().Format(time.RFC3339), accessKey, secretKey, sessionTok, n.now.Add(6*time.Hour).UTC().Format(time.RFC3339))
	n.imds.SetOverride("latest/meta-data/iam/security-credentials/", &role)
	n.imds.SetOverride("latest/meta-data/iam/security-credentials/"+role, &creds)
	n.imds.SetHopLimit(2)

	kc := kubeletconf.Kubeconfig{Server: "https://" + apiHost + ":" + n.api.port(), ClusterName: clusterName, Region: "us-west-2"}.Render()
	kubeletCfg := `{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","maxPods":29,` +
		`"evictionHard":{"memory.available":"100Mi","nodefs.available":"10%","nodefs.inodesFree":"5%","imagefs.available":"15%"}}` + "\n"
	files := []rootfs.File{
		{Path: KubeconfigPath, Data: kc, Mode: 0o644},
		{Path: KubeletConfigPath, Data: []byte(kubeletCfg), Mode: 0o644},
		{Path: kubeletconf.DefaultCAFile, Data: n.ca.pem, Mode: 0o644, Secret: true},
		{Path: kubeletDropIns + "/10-kubelet-args.conf", Data: []byte("[Service]\nEnvironment='KUBELET_ARGS=--node-ip=192.168.45.67 --v=2'\n"), Mode: 0o644},
	}
	for _, f := range files {
		must(t, n.root.WriteFile(f.Path, f.Data, f.Mode))
	}
	n.write("/usr/bin/aws-iam-authenticator", pluginScript, 0o755)
	n.write(cniConfDir+"/10-aws.conflist", `{"cniVersion":"0.4.0","name":"aws-cni","plugins":[{"type":"aws-cni"}]}`+"\n", 0o644)
	must(t, n.root.MkdirAll(nodefsPath))
	must(t, n.root.MkdirAll(imagefsPath))
	n.writeStatus(files, "")
	sock, err := n.root.Resolve(defaultCRISocket)
	must(t, err)
	criServer(t, sock)

	started := n.now.Add(-time.Hour)
	n.units = &fakeUnits{units: map[string]UnitState{
		"containerd.service": {LoadState: "loaded", ActiveState: "active", SubState: "running", Result: "success", ActiveEnter: started},
		"kubelet.service":    {LoadState: "loaded", ActiveState: "active", SubState: "running", Result: "success", ActiveEnter: started},
	}}
	n.journal = &fakeJournal{entries: map[string][]JournalEntry{}}
	n.statfs = &fakeStatfs{st: FSStats{Bytes: 100 << 30, BytesFree: 60 << 30, Inodes: 1 << 20, InodesFree: 900 << 10}}
	n.env = &Env{
		Files:    n.root,
		IMDS:     NewHTTPIMDS(n.imds.URL()),
		Resolver: fakeResolver{apiHost: {"127.0.0.1"}},
		Dialer:   &net.Dialer{},
		Now:      func() time.Time { return time.Now().Add(n.skew) },
		Units:    n.units,
		Journal:  n.journal,
		Exec:     ExecRunner{Environ: os.Environ},
		Statfs:   n.statfs,
		CRI:      GRPCCRI{},
	}
	return n
}

func (n *node) write(p, content string, mode os.FileMode) {
	n.t.Helper()
	must(n.t, n.root.WriteFile(p, []byte(content), mode))
}

// writeStatus records a run of eksboot that wrote files and ended with errMsg.
func (n *node) writeStatus(files []rootfs.File, errMsg string) {
	n.t.Helper()
	must(n.t, n.root.MkdirAll(bootstrap.StatusDir))
	s := &bootstrap.Status{
		Version: "v0.test", Started: n.now.Add(-time.Hour).UTC(), Finished: n.now.Add(-time.Hour).UTC(), Outcome: "ok", Phase: "run",
		Inputs: bootstrap.StatusInputs{ClusterName: clusterName, InstanceType: "m5.large"},
	}
	if errMsg != "" {
		s.Outcome, s.Error = "failed", errMsg
	}
	for _, f := range files {
		sf := bootstrap.StatusFile{Path: f.Path, SHA256: sha(f.Data), Mode: f.Mode, Bytes: len(f.Data)}
		if f.Path == KubeletConfigPath {
			sf.Content = string(f.Data)
		}
		s.Files = append(s.Files, sf)
	}
	must(n.t, bootstrap.WriteStatus(n.root, s))
}

// run runs the checklist with a short per-check timeout.
func (n *node) run() *Report {
	n.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return Run(ctx, n.env, Options{CheckTimeout: 2 * time.Second})
}

// result returns the named check's result, failing the test when it is missing.
func result(t *testing.T, r *Report, check string) Result {
	t.Helper()
	for _, res := range r.Results {
		if res.Check == check {
			return res
		}
	}
	t.Fatalf("no %s in the report:\n%s", check, text(t, r))
	return Result{}
}

// want checks that check has status s and that its evidence (and fix) contain each
// of subs.
func want(t *testing.T, r *Report, check string, s Status, subs ...string) Result {
	t.Helper()
	res := result(t, r, check)
	if res.Status != s {
		t.Errorf("%s: %s (%s), want %s\n%s", check, res.Status, res.Evidence, s, text(t, r))
	}
	all := res.Evidence + "\n" + res.Fix + "\n" + res.Detail
	for _, sub := range subs {
		if !strings.Contains(all, sub) {
			t.Errorf("%s: %q not in\n%s", check, sub, all)
		}
	}
	return res
}

func text(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	must(t, r.WriteText(&b))
	return b.String()
}

func jsonOf(t *testing.T, r *Report) string {
	t.Helper()
	var b strings.Builder
	must(t, r.WriteJSON(&b))
	return b.String()
}

type fakeResolver map[string][]string

func (f fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// hangingDialer never connects: a dial that a security group drops.
type hangingDialer struct{}

func (hangingDialer) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ctx.Err()}
}

type fakeUnits struct{ units map[string]UnitState }

func (f *fakeUnits) Unit(_ context.Context, name string) (UnitState, error) {
	if u, ok := f.units[name]; ok {
		return u, nil
	}
	return UnitState{LoadState: "not-found", ActiveState: "inactive", SubState: "dead"}, nil
}

// fakeJournal serves entries by unit (a recorded export, parsed).
type fakeJournal struct {
	entries map[string][]JournalEntry
	err     error
}

func (f *fakeJournal) Entries(_ context.Context, unit string, n int) ([]JournalEntry, error) {
	es := f.entries[unit]
	if len(es) > n {
		es = es[len(es)-n:]
	}
	return es, f.err
}

type fakeStatfs struct{ st FSStats }

func (f *fakeStatfs) Statfs(string) (FSStats, error) { return f.st, nil }

// loadExport reads a recorded `journalctl -o json` export from testdata.
func loadExport(t *testing.T, name string) []JournalEntry {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	must(t, err)
	es, err := ParseJournalJSON(b)
	must(t, err)
	return es
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal([]byte(s), &m))
	return m
}

// ParseJournalJSON (tests) parses `journalctl -o json` output: one entry per line. A field
// journald could not store as text (not UTF-8) is an array of byte values.
func ParseJournalJSON(out []byte) ([]JournalEntry, error) {
	return parseJournal(bytes.NewReader(out), 0)
}
