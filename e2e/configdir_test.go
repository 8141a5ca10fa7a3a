//go:build e2e

package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestKubeletConfigDirInABox boots an AL2023-layout box whose image carries drop-ins
// in the kubelet's configuration directory, /etc/kubernetes/kubelet/config.json.d,
// with the NodeConfig of sample 13, and reads the kubelet's /configz through the API
// server's node proxy: the kubelet runs with eksboot's --config-dir, and merges the
// image's drop-ins and eksboot's 40-nodeadm.conf (spec.kubelet.config) over
// kubelet-config.json by name, as under nodeadm: 10-image.conf's maxPods gives way
// to the NodeConfig's, its imageGCHighThresholdPercent stays; 90-image.conf's
// registryPullQPS and shutdownGracePeriod win over both.
//
// The box's furniture for /configz, beyond TestNodeInABox's: the API server needs a
// client certificate for the kubelet (--kubelet-client-certificate), issued by a CA
// of this test, which the user data's cluster CA bundle adds so that the kubelet
// trusts it, and to dial the Node's InternalIP (the box has no DNS for its host
// name); and the kubelet a serving certificate, which with the template's
// serverTLSBootstrap only a certificate signer (no controller manager here) would
// give it: the NodeConfig sets serverTLSBootstrap false (the kubelet makes its own;
// the API server does not verify it without --kubelet-certificate-authority).
func TestKubeletConfigDirInABox(t *testing.T) {
	bl := prepare(t)
	clientCA, clientCert, clientKey, err := kubeletClientPKI()
	if err != nil {
		t.Fatal(err)
	}
	ud, err := os.ReadFile(filepath.Join(bl.repo, "testdata/userdata/13-eks-mng-al2023-merged-by-eks.userdata"))
	if err != nil {
		t.Fatal(err)
	}
	bundle := base64.StdEncoding.EncodeToString(append(append([]byte{}, bl.pki.caCert...), clientCA...))
	userData := sampleCA.ReplaceAllLiteralString(string(ud), bundle)
	for _, e := range [][2]string{
		{"    config:\n      maxPods: 110\n", "    config:\n      failCgroupV1: false\n      serverTLSBootstrap: false\n      maxPods: 110\n"},
	} {
		if n := strings.Count(userData, e[0]); n != 1 {
			t.Fatalf("edit %q: found %d times, want once", e[0], n)
		}
		userData = strings.Replace(userData, e[0], e[1], 1)
	}
	inst := imdstest.DefaultInstance()
	inst.UserData = userData
	b := newBox(t, "e2e-configdir", bl.base)
	provision(t, b, bl, kubeletDir(t, bl, k8sNew), inst, endpointHost)

	// The image's drop-ins, as an image build (or nodeadm's users) put them there.
	b.write("etc/kubernetes/kubelet/config.json.d/10-image.conf", 0o644,
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 99\nimageGCHighThresholdPercent: 87\n")
	b.write("etc/kubernetes/kubelet/config.json.d/90-image.conf", 0o644,
		`{"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration", "registryPullQPS": 7, "shutdownGracePeriod": "50s"}`+"\n")
	// The API server's client certificate for the kubelet's API.
	b.write("etc/e2e/pki/kubelet-client.crt", 0o644, string(clientCert))
	b.write("etc/e2e/pki/kubelet-client.key", 0o600, string(clientKey))
	unit, err := b.readRoot("etc/systemd/system/e2e-apiserver.service")
	if err != nil {
		t.Fatal(err)
	}
	const anchor = "--allow-privileged=true"
	if strings.Count(unit, anchor) != 1 {
		t.Fatalf("e2e-apiserver.service: no %s to add the kubelet client flags to", anchor)
	}
	b.write("etc/systemd/system/e2e-apiserver.service", 0o644, strings.Replace(unit, anchor,
		"--kubelet-client-certificate=/etc/e2e/pki/kubelet-client.crt --kubelet-client-key=/etc/e2e/pki/kubelet-client.key "+
			"--kubelet-preferred-address-types=InternalIP "+anchor, 1))

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
	args, err := b.readRoot("etc/systemd/system/kubelet.service.d/10-kubelet-args.conf")
	if err != nil || !strings.Contains(args, "--config-dir=/etc/kubernetes/kubelet/config.json.d") {
		t.Fatalf("eksboot's kubelet arguments lack --config-dir: %v\n%s", err, args)
	}
	node := waitNode(t, ctx, b, inst.LocalHostname)
	if node.Status.Capacity["pods"] != "29" {
		t.Errorf("Node capacity pods %s, want 29 (the NodeConfig's, over 10-image.conf's 99)", node.Status.Capacity["pods"])
	}

	var cfg struct {
		KubeletConfig map[string]any `json:"kubeletconfig"`
	}
	var out string
	deadline := time.Now().Add(2 * time.Minute)
	for {
		out, err = kubectl(ctx, b, "get", "--raw", "/api/v1/nodes/"+inst.LocalHostname+"/proxy/configz")
		if err == nil || time.Now().After(deadline) || ctx.Err() != nil {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if err != nil {
		t.Fatalf("/configz through the API server: %v\n%s\nkubelet:\n%s", err, out, tail(b.journal("kubelet.service"), 30))
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil {
		t.Fatalf("/configz: %v\n%s", err, out)
	}
	k := cfg.KubeletConfig
	for field, want := range map[string]any{
		"maxPods":                     29.0,  // 40-nodeadm.conf (the NodeConfig) over 10-image.conf
		"imageGCHighThresholdPercent": 87.0,  // 10-image.conf, set by no later file
		"registryPullQPS":             7.0,   // 90-image.conf
		"shutdownGracePeriod":         "50s", // 90-image.conf over 40-nodeadm.conf's 45s
	} {
		if k[field] != want {
			t.Errorf("/configz %s = %v, want %v", field, k[field], want)
		}
	}
	// 40-nodeadm.conf over kubelet-config.json's true: /configz leaves a false out.
	if v, ok := k["serverTLSBootstrap"]; ok && v != false {
		t.Errorf("/configz serverTLSBootstrap = %v, want false", v)
	}
	if t.Failed() {
		t.Logf("/configz:\n%s", out)
	}
}

// kubeletClientPKI makes a CA and, signed by it, the API server's client certificate
// for the kubelet's API (CN kube-apiserver-kubelet-client in system:masters, whom the
// kubelet's authorization webhook lets read /configz), all PEM.
func kubeletClientPKI() (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "eksboot-e2e-kubelet-client-ca"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature, BasicConstraintsValid: true, IsCA: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "kube-apiserver-kubelet-client", Organization: []string{"system:masters"}},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: leafDER}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}
