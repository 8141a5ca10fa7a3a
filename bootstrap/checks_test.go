package bootstrap

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/nodeconfig"
)

// TestExtraArgsMustBePrintable checks that --kubelet-extra-args and
// spec.kubelet.flags refuse every byte that would not reach the kubelet as the
// printable text it looks like: C1 controls (U+0085, which some tools take as a line
// break), bytes that are not UTF-8, and characters that print as nothing or as a
// space but are not one. Each is a UsageError (exit 2), raised before any instance
// fact is read.
func TestExtraArgsMustBePrintable(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"NEL", "--a=1\u0085--b=2", "control character U+0085 at byte 5 is not allowed"},
		{"other C1 control", "--a=\u009b31m", "control character U+009B at byte 4 is not allowed"},
		{"byte 0xff", "--a=\xff", "byte 0xff at byte 4 is not UTF-8"},
		{"truncated UTF-8", "--node-labels=caf\xc3", "byte 0xc3 at byte 17 is not UTF-8"},
		{"no-break space", "--a=1\u00a0--b=2", "non-printable character U+00A0 at byte 5"},
		{"line separator", "--a=1\u2028--b=2", "non-printable character U+2028 at byte 5"},
		{"zero-width space", "--a=\u200b1", "non-printable character U+200B at byte 4"},
		{"byte order mark", "\ufeff--a=1", "non-printable character U+FEFF at byte 0"},
		{"ESC", "--v=2 \x1b[31m", "control character U+001B at byte 6"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(validArgs(t, "--kubelet-extra-args", tc.args), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Validate(o)
			var ue *UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--kubelet-extra-args: "+tc.want) {
				t.Errorf("Validate: %v; want a UsageError with %q", err, "--kubelet-extra-args: "+tc.want)
			}
			nc := &nodeconfig.NodeConfig{Spec: nodeconfig.Spec{
				Cluster: nodeconfig.Cluster{Name: "c", APIServerEndpoint: "https://x.example", CertificateAuthority: base64.StdEncoding.EncodeToString(testCA(t)), CIDR: "10.100.0.0/16"},
				Kubelet: nodeconfig.Kubelet{Flags: []string{"--v=2", tc.args}},
			}}
			_, err = FromNodeConfig(nc, DefaultSettings())
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "spec.kubelet.flags[1]: "+tc.want) {
				t.Errorf("FromNodeConfig: %v; want a UsageError with %q", err, "spec.kubelet.flags[1]: "+tc.want)
			}
		})
	}
	for _, ok := range []string{"--node-labels=café=ok,x=y", "--a=1\t--b=2", "--name=\ufffd", ""} {
		if err := checkArgs(ok); err != nil {
			t.Errorf("checkArgs(%q): %v, want nil", ok, err)
		}
	}
}
