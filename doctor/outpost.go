package doctor

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/eksboot/eksboot/internal/yamljson"
)

// BootstrapKubeconfigPath is a local cluster's bootstrap kubeconfig (eksboot writes
// it with --enable-local-outpost or spec.cluster.enableOutpost): the token the
// kubelet gets its client certificate with.
const BootstrapKubeconfigPath = "/var/lib/kubelet/bootstrap-kubeconfig"

// certRenewWarn is how soon before a client certificate expires doctor warns.
const certRenewWarn = 24 * time.Hour

// checkLocalCluster checks a local cluster on AWS Outposts, whose kubelet
// kubeconfig holds a client certificate: the bootstrap kubeconfig is there and has a
// token plugin (identity.exec-plugin then runs that plugin, the one the kubelet
// bootstraps with), and the certificate is there, current, and the node's. On any
// other node it adds nothing.
func (d *run) checkLocalCluster() {
	kc := d.facts.kubeconfig
	if kc == nil {
		return
	}
	certFile := ""
	for _, u := range kc.Users {
		if u.User.ClientCertificate != "" {
			certFile = u.User.ClientCertificate
			break
		}
	}
	if certFile == "" {
		return // a token kubeconfig: not a local cluster
	}
	b, err := d.env.Files.ReadFileLimit(BootstrapKubeconfigPath, 1<<20)
	var bkc kubeconfig
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.add(identityGroup, "identity.bootstrap-kubeconfig", Warn, KubeconfigPath+" uses a client certificate but there is no "+BootstrapKubeconfigPath+": the kubelet cannot get a new certificate once this one expires",
			"On a local cluster on AWS Outposts run eksboot with --enable-local-outpost true and --cluster-id (spec.cluster.enableOutpost and spec.cluster.id): it writes the bootstrap kubeconfig.")
	case err != nil:
		d.add(identityGroup, "identity.bootstrap-kubeconfig", Fail, fmt.Sprintf("the bootstrap kubeconfig: %v", err), "Run eksboot again: it writes "+BootstrapKubeconfigPath+".")
	case yamljson.Unmarshal(b, &bkc) != nil || !hasExec(&bkc):
		d.add(identityGroup, "identity.bootstrap-kubeconfig", Fail, BootstrapKubeconfigPath+" has no exec credential plugin: the kubelet has no token to get its client certificate with", "Run eksboot again: it rewrites "+BootstrapKubeconfigPath+".")
	default:
		server := ""
		if len(bkc.Clusters) > 0 {
			server = bkc.Clusters[0].Cluster.Server
		}
		d.add(identityGroup, "identity.bootstrap-kubeconfig", OK, fmt.Sprintf("%s: a local cluster; the kubelet bootstraps its client certificate against %s", BootstrapKubeconfigPath, server), "")
		d.facts.kubeconfig = &bkc // identity.exec-plugin runs the bootstrap token's plugin
	}
	d.checkClientCert(certFile)
}

// hasExec reports whether a kubeconfig has an exec credential plugin.
func hasExec(kc *kubeconfig) bool {
	for _, u := range kc.Users {
		if u.User.Exec != nil && u.User.Exec.Command != "" {
			return true
		}
	}
	return false
}

// checkClientCert checks the kubelet's client certificate (certificate and key in
// one file, the key never read into a result): there, current, for a node.
func (d *run) checkClientCert(certFile string) {
	const check = "identity.client-certificate"
	b, err := d.env.Files.ReadFileLimit(certFile, 1<<20)
	if errors.Is(err, fs.ErrNotExist) {
		since := "yet"
		if !d.facts.kubeletSince.IsZero() {
			since = "since the kubelet started at " + d.facts.kubeletSince.UTC().Format(time.RFC3339)
		}
		d.add(identityGroup, check, Warn, fmt.Sprintf("no client certificate %s %s: the kubelet's TLS bootstrap has not finished", certFile, since),
			"The kubelet asks for it with a CertificateSigningRequest: kubectl get csr shows whether it is pending; EKS approves a node's own request when the node role may join the cluster.")
		return
	}
	if err != nil {
		d.add(identityGroup, check, Fail, fmt.Sprintf("the client certificate %s: %v", certFile, err), "Check the file's permissions; the kubelet writes it.")
		return
	}
	var cert *x509.Certificate
	for rest := b; cert == nil; {
		var blk *pem.Block
		if blk, rest = pem.Decode(rest); blk == nil {
			break
		}
		if blk.Type == "CERTIFICATE" {
			if cert, err = x509.ParseCertificate(blk.Bytes); err != nil {
				cert = nil
				break
			}
		}
	}
	if cert == nil {
		d.add(identityGroup, check, Fail, certFile+" holds no X.509 certificate", "Remove it and restart the kubelet: it bootstraps a new one with "+BootstrapKubeconfigPath+".")
		return
	}
	now := d.env.now()
	subject := cert.Subject.CommonName
	ev := fmt.Sprintf("%s: %s, valid until %s", certFile, subject, cert.NotAfter.UTC().Format(time.RFC3339))
	switch {
	case !strings.HasPrefix(subject, "system:node:"):
		d.add(identityGroup, check, Fail, ev+": not a node's certificate (want CN system:node:<node name>)", "Remove it and restart the kubelet: it bootstraps its own with "+BootstrapKubeconfigPath+".")
	case now.After(cert.NotAfter) || now.Before(cert.NotBefore):
		d.add(identityGroup, check, Fail, ev+": not valid now", "Restart the kubelet: it bootstraps a new certificate with "+BootstrapKubeconfigPath+" (the Outpost must reach the region for the token).")
	case cert.NotAfter.Sub(now) < certRenewWarn:
		d.add(identityGroup, check, Warn, ev+": expires within a day and has not been renewed", "The kubelet renews it itself (RotateKubeletClientCertificate): check its journal for certificate_manager lines.")
	default:
		d.add(identityGroup, check, OK, ev, "")
	}
}
