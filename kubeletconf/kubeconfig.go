package kubeletconf

import (
	"fmt"
	"strings"
)

// DefaultCAFile is where bootstrap.sh writes the cluster CA and where the kubelet
// kubeconfig and kubelet-config.json point.
const DefaultCAFile = "/etc/kubernetes/pki/ca.crt"

// Kubeconfig holds the values of the kubelet's kubeconfig (/var/lib/kubelet/kubeconfig).
type Kubeconfig struct {
	// Server is the URL of the cluster's API server
	// (clusters[kubernetes].cluster.server).
	Server string

	// ClusterName is the value that follows "-i" in the aws-iam-authenticator
	// arguments: the cluster name, or the cluster ID on Outposts.
	ClusterName string

	// Region is the AWS region passed to aws-iam-authenticator's --region.
	Region string

	// CAFile is the path of the cluster CA certificate
	// (clusters[kubernetes].cluster.certificate-authority).
	// Default: DefaultCAFile
	// +optional
	CAFile string

	// Auth is the exec credential plugin: AuthIAMAuthenticator (the AL2 image's
	// /usr/bin/aws-iam-authenticator, the default) or AuthAWSCLI (`aws eks
	// get-token`, the AWS CLI v2 of the AL2023 image, as nodeadm writes it).
	// +optional
	Auth string
}

// The kubeconfig's exec credential plugins.
const (
	AuthIAMAuthenticator = "aws-iam-authenticator"
	AuthAWSCLI           = "aws"
)

// kubeconfigFormat is the AMI's kubelet-kubeconfig template with its placeholders
// (MASTER_ENDPOINT, CLUSTER_NAME, AWS_REGION) as verbs. The template double-quotes
// the cluster name and the region; the CA file and the server are plain.
const kubeconfigFormat = `apiVersion: v1
kind: Config
clusters:
- cluster:
    certificate-authority: %s
    server: %s
  name: kubernetes
contexts:
- context:
    cluster: kubernetes
    user: kubelet
  name: kubelet
current-context: kubelet
users:
- name: kubelet
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: /usr/bin/aws-iam-authenticator
      args:
        - "token"
        - "-i"
        - %s
        - --region
        - %s
`

// awsCLIUser is the users section with `aws eks get-token`: the AWS CLI v2 that the
// AL2023 image has (it has no aws-iam-authenticator), as nodeadm writes it.
const awsCLIUser = `users:
- name: kubelet
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1beta1
      command: aws
      args:
        - "eks"
        - "get-token"
        - "--cluster-name"
        - %s
        - "--region"
        - %s
`

// Render returns the kubelet kubeconfig: the AMI template with k's values where
// bootstrap.sh substitutes its placeholders. For ordinary values the output is
// byte-identical to bootstrap.sh's. Unlike bootstrap.sh's sed, every value reaches
// the kubeconfig verbatim: the server URL and the CA path are written as plain
// YAML scalars only when that is plainly safe (a path or URL of ordinary
// characters) and as double-quoted scalars otherwise; the cluster name and region
// are always double-quoted, as in the template. Double-quoted scalars use only
// escapes that YAML and JSON share (\" \\ \n \t \uXXXX ...). A Go string that is
// not valid UTF-8 cannot be written in YAML; its invalid bytes become U+FFFD.
func (k Kubeconfig) Render() []byte {
	caFile := k.CAFile
	if caFile == "" {
		caFile = DefaultCAFile
	}
	if k.Auth == AuthAWSCLI {
		head, _, _ := strings.Cut(kubeconfigFormat, "users:\n")
		return fmt.Appendf(nil, head+awsCLIUser,
			yamlScalar(caFile), yamlScalar(k.Server), yamlQuoted(k.ClusterName), yamlQuoted(k.Region))
	}
	return fmt.Appendf(nil, kubeconfigFormat,
		yamlScalar(caFile), yamlScalar(k.Server), yamlQuoted(k.ClusterName), yamlQuoted(k.Region))
}

// ClientCertKubeconfig renders the kubeconfig the kubelet writes after its TLS
// bootstrap (writeKubeconfigFromBootstrapping in k8s.io/kubernetes
// pkg/kubelet/certificate/bootstrap), field for field: the bootstrap kubeconfig's
// server and CA file, and the client certificate and key in certFile. On a local
// cluster on AWS Outposts eksboot writes it as the kubelet's --kubeconfig: while the
// certificate is missing or expired the kubelet finds this kubeconfig unusable and
// bootstraps with its --bootstrap-kubeconfig (then writes the same file); once it
// has a certificate it uses it, with no token and no call to the region.
func ClientCertKubeconfig(server, caFile, certFile string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
clusters:
- cluster:
    certificate-authority: %s
    server: %s
  name: default-cluster
contexts:
- context:
    cluster: default-cluster
    namespace: default
    user: default-auth
  name: default-context
current-context: default-context
kind: Config
preferences: {}
users:
- name: default-auth
  user:
    client-certificate: %s
    client-key: %s
`, yamlScalar(caFile), yamlScalar(server), yamlScalar(certFile), yamlScalar(certFile))
}

// yamlScalar returns s as a plain YAML scalar when isPlainSafe(s), else double-quoted.
func yamlScalar(s string) string {
	if isPlainSafe(s) {
		return s
	}
	return yamlQuoted(s)
}

// isPlainSafe reports whether s can be written as a plain (unquoted) YAML scalar
// that every YAML 1.1 or 1.2 parser reads back as the string s. It accepts only an
// absolute path or a scheme://... URL made of letters, digits and "-._~/:?=@+%",
// not ending in ':'. Such a value has no indicator at its start, no ": " or " #",
// no flow characters, and cannot resolve to a bool, null or number.
func isPlainSafe(s string) bool {
	if !strings.HasPrefix(s, "/") && !isURLPrefix(s) {
		return false
	}
	if strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if !isPlainRune(r) {
			return false
		}
	}
	return true
}

// isURLPrefix reports whether s starts with scheme "://", the scheme being a
// letter followed by letters, digits, '+', '-' or '.'.
func isURLPrefix(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || scheme == "" || !isASCIILetter(rune(scheme[0])) {
		return false
	}
	for _, r := range scheme {
		if !isASCIILetter(r) && !isASCIIDigit(r) && !strings.ContainsRune("+-.", r) {
			return false
		}
	}
	return true
}

func isPlainRune(r rune) bool {
	return isASCIILetter(r) || isASCIIDigit(r) || strings.ContainsRune("-._~/:?=@+%", r)
}

func isASCIILetter(r rune) bool { return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') }

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }

// yamlQuoted returns s as a YAML double-quoted scalar. It escapes '"', '\' and
// every character that YAML does not allow unescaped or would fold (C0 and C1
// controls, DEL, U+2028, U+2029, U+FEFF, U+FFFE, U+FFFF), with escapes that are
// valid in both YAML and JSON, so the result also decodes with encoding/json.
func yamlQuoted(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for _, r := range s {
		// Invalid UTF-8 decodes as utf8.RuneError (U+FFFD), which is written as is.
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || (0x7f <= r && r <= 0x9f) || r == '\u2028' || r == '\u2029' ||
				r == '\ufeff' || r == '\ufffe' || r == '\uffff' {
				fmt.Fprintf(&b, `\u%04X`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
