package bootstrap

import (
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/nodeconfig"
)

// TestErrorsNeverEchoACertificate passes a CA (base64 of its PEM, or of its DER) to
// flags and fields that are not the CA's, and checks the error says "a certificate
// (not shown)" and holds no piece of it.
func TestErrorsNeverEchoACertificate(t *testing.T) {
	pemCA := testCA(t)
	b64 := base64.StdEncoding.EncodeToString(pemCA)
	der, _ := pemBlockBytes(pemCA)
	b64DER := base64.StdEncoding.EncodeToString(der)
	check := func(t *testing.T, err error, ca string) {
		t.Helper()
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		if !strings.Contains(msg, "a certificate (not shown)") {
			t.Errorf("error %q does not say a certificate was given", msg)
		}
		for i := 0; i+12 <= len(ca); i += 12 {
			if strings.Contains(msg, ca[i:i+12]) {
				t.Errorf("error %q holds bytes %d-%d of the CA", msg, i, i+12)
				break
			}
		}
	}
	for _, ca := range []string{b64, b64DER} {
		for _, flag := range []string{"--apiserver-endpoint", "--dns-cluster-ip", "--service-ipv4-cidr", "--pause-container-version", "--ip-family"} {
			t.Run(flag, func(t *testing.T) {
				o, err := parseArgs(validArgs(t, flag, ca), noEnv)
				if err != nil {
					t.Fatal(err)
				}
				_, err = Validate(o)
				check(t, err, ca)
			})
		}
		t.Run("CLUSTER_NAME", func(t *testing.T) {
			o, err := parseArgs(append([]string{ca}, validArgs(t)[1:]...), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Validate(o)
			check(t, err, ca)
		})
		for _, field := range []string{"name", "apiServerEndpoint", "cidr"} {
			t.Run("spec.cluster."+field, func(t *testing.T) {
				cl := nodeconfig.Cluster{Name: "c", APIServerEndpoint: "https://x.example", CertificateAuthority: b64, CIDR: "10.100.0.0/16"}
				switch field {
				case "name":
					cl.Name = ca
				case "apiServerEndpoint":
					cl.APIServerEndpoint = ca
				case "cidr":
					cl.CIDR = ca
				}
				_, err := FromNodeConfig(&nodeconfig.NodeConfig{Spec: nodeconfig.Spec{Cluster: cl}}, DefaultSettings())
				check(t, err, ca)
			})
		}
	}
}

// TestErrorsAreOneReadableLine gives huge values and many problems and checks the
// error stays a short line: each value cut to a prefix with its length, the first ten
// problems listed with a count of the rest.
func TestErrorsAreOneReadableLine(t *testing.T) {
	huge := strings.Repeat("c", 60<<10)
	t.Run("60 KB cluster name", func(t *testing.T) {
		o, err := parseArgs(append([]string{huge}, validArgs(t)[1:]...), noEnv)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Validate(o)
		want := `CLUSTER_NAME "cccccccccccccccccccccccccccccccccccccccc"…(61440 bytes) is not a cluster name`
		if err == nil || !strings.HasPrefix(err.Error(), want) || len(err.Error()) > 300 {
			t.Errorf("error %.300q (%d bytes), want it to start %q and be short", err, len(fmt.Sprint(err)), want)
		}
	})
	t.Run("every flag 60 KB", func(t *testing.T) {
		var args []string
		for _, f := range []string{
			"--apiserver-endpoint", "--aws-api-retry-attempts", "--containerd-config-file", "--pause-container-account",
			"--pause-container-version", "--container-runtime", "--dns-cluster-ip", "--ip-family", "--service-ipv4-cidr",
			"--service-ipv6-cidr", "--local-disks", "--use-max-pods", "--log-format", "--kubelet-version", "--image-profile", "--max-pods-mode",
		} {
			args = append(args, f, "x"+huge)
		}
		o, err := parseArgs(append([]string{huge}, args...), func(k string) string {
			if k == "PAUSE_CONTAINER_IMAGE" {
				return huge
			}
			return ""
		})
		if err != nil {
			t.Fatal(err)
		}
		_, err = Validate(o)
		if err == nil || len(err.Error()) > 4096 || !strings.HasSuffix(err.Error(), " more") {
			t.Errorf("error is %d bytes: %.500q", len(fmt.Sprint(err)), err)
		}
	})
	t.Run("5,000 NodeConfig parts", func(t *testing.T) {
		var sources []nodeconfig.Source
		for i := range 5000 {
			sources = append(sources, nodeconfig.Source{
				Where: fmt.Sprintf("part %d (application/node.eks.aws)", i+1),
				Body:  []byte("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    unknownField: " + huge[:1000] + "\n"),
			})
		}
		_, err := nodeconfig.DecodeAndMerge(sources)
		if err == nil || len(err.Error()) > 2048 || !strings.HasSuffix(err.Error(), "; and 4990 more") {
			t.Errorf("error is %d bytes: %.500q", len(fmt.Sprint(err)), err)
		}
	})
	t.Run("long unknown key", func(t *testing.T) {
		_, err := nodeconfig.DecodeNodeConfigs([]byte("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  "+huge[:1000]+": 1\n"), "part 1 (application/node.eks.aws)")
		want := `part 1 (application/node.eks.aws): spec."cccccccccccccccccccccccccccccccccccccccc"…(1000 bytes): unknown field`
		if err == nil || err.Error() != want {
			t.Errorf("error %.300q, want %q", err, want)
		}
	})
	t.Run("long wrong-typed value", func(t *testing.T) {
		_, err := nodeconfig.DecodeNodeConfigs([]byte("apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n    flags: "+huge+"\n"), "f")
		want := `f: spec.kubelet.flags: want a list, got the string "cccccccccccccccccccccccccccccccccccccccc"…(61440 bytes)`
		if err == nil || err.Error() != want {
			t.Errorf("error %.300q, want %q", err, want)
		}
	})
}

// pemBlockBytes returns the DER of the first PEM block of b.
func pemBlockBytes(b []byte) ([]byte, bool) {
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, false
	}
	return block.Bytes, true
}
