package doctor

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// localCluster turns n into a node of a local cluster on AWS Outposts, as eksboot
// writes it: the client-certificate kubeconfig and the bootstrap kubeconfig, whose
// token names the cluster ID.
func localCluster(t *testing.T, n *node) {
	t.Helper()
	server := "https://" + apiHost + ":" + n.api.port()
	files := []rootfs.File{
		{Path: KubeconfigPath, Data: kubeletconf.ClientCertKubeconfig(server, kubeletconf.DefaultCAFile, bootstrap.PathKubeletClientCert), Mode: 0o644},
		{Path: BootstrapKubeconfigPath, Data: kubeletconf.Kubeconfig{Server: server, ClusterName: "51eaebb5-7e52-4e71-baba-e98a6314b10e", Region: "us-west-2"}.Render(), Mode: 0o644},
		{Path: KubeletConfigPath, Data: []byte(n.read(KubeletConfigPath)), Mode: 0o644},
		{Path: kubeletconf.DefaultCAFile, Data: n.ca.pem, Mode: 0o644, Secret: true},
	}
	for _, f := range files {
		must(t, n.root.WriteFile(f.Path, f.Data, f.Mode))
	}
	n.writeStatus(files, "")
}

// clientCert writes the kubelet's client certificate and key (one file, as the
// kubelet does) for cn, valid until notAfter, and returns the key's PEM.
func clientCert(t *testing.T, n *node, cn string, notAfter time.Time) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: []string{"system:nodes"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, KeyUsage: x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, n.ca.cert, &key.PublicKey, n.ca.key)
	must(t, err)
	kder, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}))
	n.write(bootstrap.PathKubeletClientCert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))+keyPEM, 0o600)
	return keyPEM
}

// TestLocalClusterNode: doctor knows a local cluster's node by its client-certificate
// kubeconfig, checks its bootstrap kubeconfig (and runs that token plugin) and its
// client certificate: missing while the TLS bootstrap is pending, expired, another
// subject's, or good; the key never shows.
func TestLocalClusterNode(t *testing.T) {
	const node = "system:node:ip-192-168-45-67.us-west-2.compute.internal"
	n := newNode(t)
	localCluster(t, n)

	r := n.run()
	want(t, r, "identity.bootstrap-kubeconfig", OK, BootstrapKubeconfigPath, "a local cluster")
	want(t, r, "identity.client-certificate", Warn, "no client certificate "+bootstrap.PathKubeletClientCert, "TLS bootstrap has not finished")
	want(t, r, "identity.exec-plugin", OK, "aws-iam-authenticator returned a token")

	key := clientCert(t, n, node, time.Now().Add(365*24*time.Hour))
	r = n.run()
	want(t, r, "identity.client-certificate", OK, node, "valid until")
	if strings.Contains(jsonOf(t, r), strings.Split(key, "\n")[1]) {
		t.Error("the report shows the client certificate's key")
	}
	checkNoSecrets(t, r)

	clientCert(t, n, node, time.Now().Add(-time.Minute))
	want(t, n.run(), "identity.client-certificate", Fail, "not valid now")
	clientCert(t, n, node, time.Now().Add(time.Hour))
	want(t, n.run(), "identity.client-certificate", Warn, "expires within a day")
	clientCert(t, n, "admin", time.Now().Add(time.Hour*48))
	want(t, n.run(), "identity.client-certificate", Fail, "not a node's certificate")
	n.write(bootstrap.PathKubeletClientCert, "junk\n", 0o600)
	want(t, n.run(), "identity.client-certificate", Fail, "holds no X.509 certificate")

	p, err := n.root.Resolve(BootstrapKubeconfigPath)
	must(t, err)
	must(t, os.Remove(p))
	want(t, n.run(), "identity.bootstrap-kubeconfig", Warn, "there is no "+BootstrapKubeconfigPath)
}

// TestTokenNodeHasNoLocalClusterChecks: a node in the region (token kubeconfig)
// gets neither check.
func TestTokenNodeHasNoLocalClusterChecks(t *testing.T) {
	r := newNode(t).run()
	for _, res := range r.Results {
		if res.Check == "identity.bootstrap-kubeconfig" || res.Check == "identity.client-certificate" {
			t.Errorf("%s on a token node: %s", res.Check, res.Evidence)
		}
	}
}
