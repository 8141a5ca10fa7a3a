//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// doctorReport is the part of `eksboot doctor --output json` the test reads.
type doctorReport struct {
	Checks []struct {
		Group, Check, Status, Evidence, Fix string
	} `json:"checks"`
	Summary struct{ OK, Warn, Fail int } `json:"summary"`
}

func (r doctorReport) check(name string) (status, evidence string) {
	for _, c := range r.Checks {
		if c.Check == name {
			return c.Status, c.Evidence
		}
	}
	return "", ""
}

// TestDoctor boots case 13 (a NodeConfig on AL2023) with the newest kubelet and runs
// eksboot doctor in the box: on the healthy node it reports no FAIL and exits 0 (the
// API server knows the kubelet as its node); with the node's token no longer
// mapped, the kubelet is refused and doctor's identity checks fail; with the API
// server's certificate swapped for one of another cluster's CA, it
// reports the CA mismatch and exits 1.
func TestDoctor(t *testing.T) {
	bl := prepare(t)
	var c userDataCase
	for _, uc := range cases {
		if uc.sample == "13-eks-mng-al2023-merged-by-eks" && uc.name == "" {
			c = uc
		}
	}
	ud, err := os.ReadFile(filepath.Join(bl.repo, "testdata/userdata", c.sample+".userdata"))
	if err != nil {
		t.Fatal(err)
	}
	userData := sampleCA.ReplaceAllLiteralString(string(ud), base64.StdEncoding.EncodeToString(bl.pki.caCert))
	for _, e := range c.edits {
		if n := strings.Count(userData, e[0]); n != 1 {
			t.Fatalf("%s: edit %q: found %d times, want once", c.sample, e[0], n)
		}
		userData = strings.Replace(userData, e[0], e[1], 1)
	}
	inst := imdstest.DefaultInstance()
	inst.UserData = userData
	// The instance profile of the node, which the box's IMDS otherwise lacks.
	role := "eks-e2e-node-role"
	creds := fmt.Sprintf(`{"Code":"Success","LastUpdated":"%s","Type":"AWS-HMAC","AccessKeyId":"ASIAE2EEXAMPLE000000","SecretAccessKey":"e2e-secret-access-key-example-0000000000","Token":"e2e-session-token-example","Expiration":"%s"}`,
		time.Now().UTC().Format(time.RFC3339), time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339))
	inst.Overrides = map[string]*string{
		"latest/meta-data/iam/security-credentials/":        &role,
		"latest/meta-data/iam/security-credentials/" + role: &creds,
	}

	b := newBox(t, "e2e-doctor", bl.base)
	provision(t, b, bl, kubeletDir(t, bl, k8sNew), inst, endpointHost)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	state := b.boot(ctx)
	defer func() {
		if t.Failed() {
			t.Logf("journal of the boot: %s", b.saveJournal())
		}
	}()
	if state != "running" {
		failed, _ := b.exec("systemctl", "--failed", "--no-pager", "--no-legend")
		t.Fatalf("systemctl is-system-running: %s, want running; failed units:\n%s", state, failed)
	}
	waitNode(t, ctx, b, inst.LocalHostname)

	// The healthy node.
	r, text, err := doctor(t, b)
	t.Logf("eksboot doctor on the healthy box:\n%s", text)
	if err != nil || r.Summary.Fail != 0 {
		t.Errorf("doctor on a healthy node: %v, %d FAIL:\n%s", err, r.Summary.Fail, text)
	}
	for _, name := range []string{
		"imds.token", "imds.credentials", "eksboot.last-run", "eksboot.files", "api.dns", "api.tcp",
		"api.tls", "api.clock", "identity.exec-plugin", "identity.api", "identity.kubelet-journal", "runtime.containerd", "runtime.kubelet",
		"runtime.cri", "runtime.max-pods",
	} {
		if s, ev := r.check(name); s != "ok" {
			t.Errorf("%s: %s %s, want ok", name, s, ev)
		}
	}
	if s, ev := r.check("runtime.cri"); !strings.Contains(ev, "containerd") {
		t.Errorf("runtime.cri: %s %s, want containerd's own answer", s, ev)
	}

	// The node's mapping removed: the kubelet refused, doctor names it.
	checkIdentityRefused(t, b, bl.pki.kubeletToken)

	// The API server now serves a certificate of another cluster's CA.
	other, err := newPKI(endpointHost, net.ParseIP("127.0.0.1"), net.ParseIP("10.100.0.1"))
	if err != nil {
		t.Fatal(err)
	}
	b.write("etc/e2e/pki/apiserver.crt", 0o644, string(other.servingCert))
	b.write("etc/e2e/pki/apiserver.key", 0o600, string(other.servingKey))
	if out, err := b.exec("systemctl", "restart", "e2e-apiserver.service"); err != nil {
		t.Fatalf("restart the API server: %v %s", err, out)
	}
	deadline := time.Now().Add(90 * time.Second)
	var status, evidence string
	for time.Now().Before(deadline) {
		r, text, err = doctor(t, b)
		if status, evidence = r.check("api.tls"); status == "FAIL" && strings.Contains(evidence, "another cluster") {
			break
		}
		time.Sleep(2 * time.Second) // the API server is starting: api.tcp is refused meanwhile
	}
	t.Logf("eksboot doctor with the API server's CA swapped:\n%s", text)
	if status != "FAIL" || !strings.Contains(evidence, "the CA in the user data belongs to another cluster") || err == nil {
		t.Errorf("api.tls: %s %q (doctor: %v), want FAIL naming the CA of another cluster and exit 1", status, evidence, err)
	}
	for _, secret := range []string{bl.pki.kubeletToken, "e2e-secret-access-key-example-0000000000", "e2e-session-token-example", "BEGIN CERTIFICATE"} {
		if strings.Contains(text, secret) {
			t.Errorf("doctor's output shows a secret (%.8s…)", secret)
		}
	}
}

// doctor runs eksboot doctor in the box, as JSON then as text; err is the JSON run's
// (an exit status 1 when a check failed).
func doctor(t *testing.T, b *box) (doctorReport, string, error) {
	t.Helper()
	args := []string{"eksboot", "doctor", "--imds-endpoint", "http://" + imdsAddr, "--timeout", "60s"}
	out, err := b.exec(append(args, "--output", "json")...)
	var r doctorReport
	if i := strings.Index(out, "{"); i < 0 {
		t.Fatalf("eksboot doctor --output json printed no JSON: %v\n%s", err, out)
	} else if jerr := json.Unmarshal([]byte(out[i:]), &r); jerr != nil {
		t.Fatalf("eksboot doctor --output json: %v %v\n%s", err, jerr, out)
	}
	text, _ := b.exec(args...)
	return r, text, err
}
