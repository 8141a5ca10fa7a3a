package doctor

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/rootfs"
)

// floodLimit is how many bytes of headers a flooding server sends before it gives up:
// far beyond what doctor may read, and small enough that a doctor that reads it all
// fails the test instead of the machine.
const floodLimit = 32 << 20

// floodServer answers every request on 127.0.0.1 (over TLS when cert is given) with a
// status line and headers that do not end, up to floodLimit bytes. It returns the
// port and the most bytes one connection took before the client hung up.
func floodServer(t *testing.T, cert *tls.Certificate) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	t.Cleanup(func() { ln.Close() })
	var most atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
					return
				}
				line := []byte("X-Flood: " + strings.Repeat("a", 1000) + "\r\n")
				n, _ := c.Write([]byte("HTTP/1.1 200 OK\r\nDate: " + time.Now().UTC().Format(time.RFC1123) + "\r\n"))
				sent := int64(n)
				for sent < floodLimit {
					n, err := c.Write(line)
					sent += int64(n)
					if err != nil {
						break
					}
				}
				for old := most.Load(); sent > old && !most.CompareAndSwap(old, sent); old = most.Load() {
				}
			}()
		}
	}()
	_, p, _ := net.SplitHostPort(ln.Addr().String())
	return p, &most
}

// TestEndlessHeadersAreBounded: an API server that answers GET /version (and the
// token review) with headers that never end makes doctor fail api.clock with one
// clear line, after reading a bounded part of them; IMDS the same.
func TestEndlessHeadersAreBounded(t *testing.T) {
	n := newNode(t)
	cert := n.ca.serving(t)
	port, most := floodServer(t, &cert)
	n.write(KubeconfigPath, strings.Replace(n.read(KubeconfigPath), ":"+n.api.port()+"\n", ":"+port+"\n", 1), 0o644)
	r := n.run()
	want(t, r, "api.tls", OK)
	want(t, r, "api.clock", Fail, "GET /version", "more than 64 KiB of headers")
	want(t, r, "identity.api", Warn, "headers exceeded 65536 bytes")
	if m := most.Load(); m >= 16<<20 {
		t.Errorf("doctor read %d bytes of headers from one connection, want far fewer than the %d sent", m, floodLimit)
	}

	n = newNode(t)
	port, most = floodServer(t, nil)
	n.env.IMDS = NewHTTPIMDS("http://127.0.0.1:" + port)
	r = n.run()
	want(t, r, "imds.token", Fail, "headers exceeded")
	if m := most.Load(); m >= 16<<20 {
		t.Errorf("doctor read %d bytes of IMDS headers from one connection", m)
	}
}

// TestJournalIsBounded: journalctl's output is read through a limit: a journalctl
// that prints more lines than asked gives at most those, and one that never stops
// is cut off with an error.
func TestJournalIsBounded(t *testing.T) {
	dir := t.TempDir()
	entry := `{"__REALTIME_TIMESTAMP":"1764590000000000","PRIORITY":"3","SYSLOG_IDENTIFIER":"kubelet","MESSAGE":"E1201 failed ` + strings.Repeat("x", 100) + `"}`
	script := func(name, body string) JournalCtl {
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
		return JournalCtl{Path: p}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	es, err := script("more", fmt.Sprintf("yes '%s' | head -n 3000", entry)).Entries(ctx, "kubelet.service", 100)
	if err != nil || len(es) != 100 {
		t.Errorf("3000 lines for 100 asked: %d entries, %v", len(es), err)
	}
	es, err = script("endless", fmt.Sprintf("exec yes '%s'", entry)).Entries(ctx, "kubelet.service", 100)
	if err == nil || !strings.Contains(err.Error(), "more than 16 MiB") || len(es) > 100 {
		t.Errorf("endless output: %d entries, %v", len(es), err)
	}
	long := `{"MESSAGE":"` + strings.Repeat("y", 2<<20) + `"}`
	es, err = script("long", "printf '%s\\n' '"+long+"'").Entries(ctx, "kubelet.service", 100)
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("a 2 MiB line: %d entries, %v", len(es), err)
	}
}

// controlChar is any control character but the newline that separates lines.
var controlChar = regexp.MustCompile("[\x00-\x09\x0b-\x1f\x7f\u0080-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]")

// forged is a line of doctor's checklist that no check of doctor wrote.
var forged = regexp.MustCompile(`(?m)^\s*(ok|warn|FAIL)\s+identity\.fake`)

// TestHostileTextIsEscaped: control characters from the kubelet's journal, the API
// server's answers and the status file are escaped, one line per piece of evidence,
// in the text and in the JSON output: no ESC reaches the terminal, and a newline in
// a group forges no line of the checklist.
func TestHostileTextIsEscaped(t *testing.T) {
	n := newNode(t)
	esc := "\x1b[2J\x1b[31m"
	n.api.user = "system:node:ip-1\x1b]0;owned\x07"
	n.api.groups = []string{"system:nodes\n  ok    identity.fake            all good" + esc, "system:authenticated\r\u202e"}
	n.journal.entries["kubelet.service"] = []JournalEntry{
		{Time: time.Now(), Priority: 3, Message: "E1201 err=\"Unauthorized\" " + esc + "\nok    identity.fake  forged\x00"},
	}
	must(t, n.root.WriteFile(bootstrap.StatusPath, []byte(`{"version":"v1`+"\\u001b[31m"+`","outcome":"failed","phase":"run\u0007","error":"boom\n  ok    identity.fake  forged`+"\\u001b[0m"+`","inputs":{"clusterName":"c\u001b"}}`), 0o644))
	r := n.run()
	for name, out := range map[string]string{"text": text(t, r)} {
		if controlChar.MatchString(out) {
			t.Errorf("the %s output has a control character: %q", name, controlChar.FindString(out))
		}
		if forged.MatchString(out) {
			t.Errorf("the %s output has a forged line %q:\n%s", name, forged.FindString(out), out)
		}
	}
	want(t, r, "identity.api", Warn, `\n  ok    identity.fake`, `\x1b[2J`)
	want(t, r, "eksboot.last-run", Fail, `boom\n`)
	var doc struct {
		Node   string   `json:"node"`
		Checks []Result `json:"checks"`
	}
	must(t, json.Unmarshal([]byte(jsonOf(t, r)), &doc))
	for _, c := range doc.Checks {
		for _, s := range []string{c.Evidence, c.Fix, c.Detail} {
			if strings.Contains(strings.TrimRight(s, "\n"), "\n") && s != c.Detail || controlChar.MatchString(s) {
				t.Errorf("%s in the JSON: %q", c.Check, s)
			}
		}
	}
}

// TestHandEditedSecretsAreRedacted: the diff of a hand-edited kubeconfig or
// kubelet-config.json shows the keys of the secrets added, never their values.
func TestHandEditedSecretsAreRedacted(t *testing.T) {
	n := newNode(t)
	kc := n.read(KubeconfigPath)
	files := []rootfs.File{
		{Path: KubeconfigPath, Data: []byte(kc), Mode: 0o644},
		{Path: KubeletConfigPath, Data: []byte(n.read(KubeletConfigPath)), Mode: 0o644},
	}
	must(t, os.MkdirAll(filepath.Join(n.dir, bootstrap.StatusDir), 0o755))
	s := &bootstrap.Status{Version: "v0.test", Finished: time.Now(), Outcome: "ok", Phase: "run"}
	for _, f := range files {
		s.Files = append(s.Files, bootstrap.StatusFile{Path: f.Path, SHA256: sha(f.Data), Mode: f.Mode, Bytes: len(f.Data), Content: string(f.Data)})
	}
	must(t, bootstrap.WriteStatus(n.root, s))

	caData := base64.StdEncoding.EncodeToString(n.ca.pem)
	secrets := map[string]string{
		"token":                      "s3cr3t-bearer-token-9876543210zyxwvu",
		"client-key-data":            "TUlJRXZRSUJBREFOQmdrcWhraUc5dzBCQVFFRkFBU0NCS2N3Z2dTakFnRUFBb0lCQVFDNw==",
		"client-certificate-data":    "Y2xpZW50LWNlcnRpZmljYXRlLWRhdGEtdmFsdWUtMDEyMzQ1Njc4OQ==",
		"certificate-authority-data": caData,
		"password":                   "hunter2-correct-horse-battery",
	}
	var add strings.Builder
	for _, k := range []string{"token", "client-key-data", "client-certificate-data", "password"} {
		fmt.Fprintf(&add, "    %s: %s\n", k, secrets[k])
	}
	edited := strings.Replace(kc, "- cluster:\n", "- cluster:\n    certificate-authority-data: "+caData+"\n", 1)
	edited = strings.Replace(edited, "  user:\n", "  user:\n"+add.String(), 1)
	edited += "# -----BEGIN EC PRIVATE KEY-----\n# MHcCAQEEIBx5VNXAHTjvQbpKZcX0u9e2pHLKXXf6bNjOdInDpKeyLine\n# -----END EC PRIVATE KEY-----\n"
	secrets["pem"] = "MHcCAQEEIBx5VNXAHTjvQbpKZcX0u9e2pHLKXXf6bNjOdInDpKeyLine"
	n.write(KubeconfigPath, edited, 0o644)
	cfg := n.read(KubeletConfigPath)
	n.write(KubeletConfigPath, strings.Replace(cfg, `"maxPods":29`, `"maxPods":29,"staticPodURLHeader":{"Authorization":["Bearer abcdef0123456789secret"]},"registryPassword":"pa55w0rd-in-json-0123"`, 1), 0o644)
	secrets["bearer"] = "abcdef0123456789secret"
	secrets["json-password"] = "pa55w0rd-in-json-0123"

	r := n.run()
	res := want(t, r, "eksboot.files", Warn, "edited them by hand", "+    token: (redacted", "client-key-data: (redacted", "certificate-authority-data: (redacted", `"registryPassword":"(redacted`)
	out := text(t, r) + jsonOf(t, r)
	for k, v := range secrets {
		if i := leaked(out, v); i != "" {
			t.Errorf("the %s %q shows in the diff (%q):\n%s", k, v[:8]+"…", i, res.Detail)
		}
	}
}

// leaked returns the first 12-byte piece of secret that shows in out.
func leaked(out, secret string) string {
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(out, secret[i:i+12]) {
			return secret[i : i+12]
		}
	}
	return ""
}

// TestRedactionBeforeTruncation: an IMDS answer whose Message quotes the secret key
// shows no piece of it (it was cut to 40 bytes first, and the cut secret escaped the
// redaction).
func TestRedactionBeforeTruncation(t *testing.T) {
	n := newNode(t)
	creds := `{"Code":"AccessDenied","Message":"signature of ` + secretKey + ` with ` + accessKey + ` refused","AccessKeyId":"` + accessKey + `","SecretAccessKey":"` + secretKey + `","Token":"` + sessionTok + `"}`
	n.imds.SetOverride("latest/meta-data/iam/security-credentials/"+roleName, &creds)
	r := n.run()
	want(t, r, "imds.credentials", Fail, "AccessDenied", "(redacted)")
	out := text(t, r) + jsonOf(t, r)
	for _, s := range []string{secretKey, accessKey, sessionTok} {
		if i := leaked(out, s); i != "" {
			t.Errorf("a piece of a secret shows: %q\n%s", i, out)
		}
	}
}

// TestDeadlineLeavesChecksNotRun: when the whole checklist's deadline runs out (here,
// while IMDS hangs), the checks it left no time for are reported as not run, with no
// fix, not as failures of the API server.
func TestDeadlineLeavesChecksNotRun(t *testing.T) {
	n := newNode(t)
	n.imds.SetHang("latest/api/token", true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	r := Run(ctx, n.env, Options{CheckTimeout: 5 * time.Second})
	want(t, r, "imds.token", Skip, "not run")
	want(t, r, "api.tcp", Skip, "not run")
	want(t, r, "identity.exec-plugin", Skip, "not run")
	for _, res := range r.Results {
		if res.Status == Fail || res.Status == Skip && res.Fix != "" {
			t.Errorf("%s: %s %q, fix %q", res.Check, res.Status, res.Evidence, res.Fix)
		}
	}
	if r.Summary.Skip == 0 || r.Summary.Fail != 0 || r.Failed() {
		t.Errorf("summary %+v", r.Summary)
	}
	if out := text(t, r); !strings.Contains(out, " not run (") {
		t.Errorf("the text summary does not count the checks not run:\n%s", out)
	}
	if m := decode(t, jsonOf(t, r)); m["summary"].(map[string]any)["skip"] == nil {
		t.Errorf("the JSON summary has no skip count: %v", m["summary"])
	}
}
