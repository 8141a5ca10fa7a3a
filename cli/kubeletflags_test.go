package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/kubeletconf/kubeletflags"
	"github.com/eksboot/eksboot/kubeletconf/kubeletgates"
)

// TestKubeletFlagsExistInEveryVersion boots golden case 01 (and a case with extra
// args) for every kubelet minor of kubeletflags (1.24-1.38), on a bare root (the AL2
// profile) and on the AL2023 image, and checks every flag of the kubelet's command
// line (kubelet.service's ExecStart and the KUBELET_ARGS drop-in eksboot wrote) against
// that version's own flag set: a kubelet exits on an unknown flag, and the node never
// joins; and every feature gate of the kubelet-config.json it wrote against that
// version's gates (kubeletgates): a kubelet panics on an unknown gate or one set
// against its lock, and eksboot sets none that is locked or deprecated. (What the
// user gives the kubelet is judged at run time: kubeletconf.CheckArgs, CheckConfig.)
func TestKubeletFlagsExistInEveryVersion(t *testing.T) {
	c, err := goldencase.Load("../testdata/golden/01-m5large-usw2-vpc192")
	must(t, err)
	for _, minor := range kubeletflags.Minors() {
		for _, profile := range []string{bootstrap.ProfileAL2, bootstrap.ProfileAL2023} {
			t.Run(fmt.Sprintf("1.%d-%s", minor, profile), func(t *testing.T) {
				fakes := c.StartFor(t)
				old := envHook
				t.Cleanup(func() { envHook = old })
				envHook = func(env *bootstrap.Env) {
					env.CPUs = c.CPUs
					env.DNSNameAttempts, env.DNSNameInterval = 1, 0
				}
				dir := t.TempDir()
				kv := fmt.Sprintf("v1.%d.0-eks-0123456", minor)
				if profile == bootstrap.ProfileAL2023 {
					must(t, imagefixture.AL2023{KubeletVersion: kv}.Write(dir))
				}
				argv := append([]string{"/etc/eks/bootstrap.sh"}, c.Args...)
				argv = append(argv, "--root", dir, "--no-restart", "--imds-endpoint", fakes.IMDS.URL(), "--kubelet-version", kv)
				var stderr bytes.Buffer
				if code := Main(argv, io.Discard, &stderr); code != 0 {
					t.Fatalf("exit %d\n%s", code, stderr.String())
				}
				tree, err := readTree(dir)
				must(t, err)
				flags := kubeletCommandLine(t, tree)
				if len(flags) < 8 {
					t.Fatalf("only %d flags found: %q", len(flags), flags)
				}
				for _, f := range flags {
					name, _, _ := strings.Cut(f, "=")
					if !kubeletflags.Has(minor, name) {
						since, _ := kubeletflags.Removed(minor, name)
						t.Errorf("kubelet 1.%d has no flag %s (removed in 1.%d; eksboot wrote %q)", minor, name, since, f)
					}
				}
				// And every feature gate of kubelet-config.json: one that kubelet has,
				// set where it is not locked, and not deprecated.
				var cfg struct {
					FeatureGates map[string]bool `json:"featureGates"`
				}
				must(t, json.Unmarshal(tree["/etc/kubernetes/kubelet/kubelet-config.json"], &cfg))
				if len(cfg.FeatureGates) == 0 {
					t.Fatal("kubelet-config.json has no feature gates (RotateKubeletServerCertificate at least)")
				}
				for name, on := range cfg.FeatureGates {
					switch g, ok := kubeletgates.Lookup(minor, name); {
					case !ok:
						t.Errorf("kubelet 1.%d has no feature gate %s (eksboot wrote %s: %v)", minor, name, name, on)
					case g.Locked || g.Stage == kubeletgates.Deprecated:
						t.Errorf("kubelet 1.%d has feature gate %s %s, locked %v (eksboot wrote %v)", minor, name, g.Stage, g.Locked, on)
					}
				}
			})
		}
	}
}

// kubeletCommandLine returns the flags of kubelet.service's ExecStart and of the
// KUBELET_ARGS drop-in in tree.
func kubeletCommandLine(t *testing.T, tree map[string][]byte) []string {
	t.Helper()
	var words []string
	for _, p := range []string{"/etc/systemd/system/kubelet.service", "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"} {
		b, ok := tree[p]
		if !ok {
			t.Fatalf("%s was not written", p)
		}
		opts, err := unit.DeserializeOptions(bytes.NewReader(b))
		must(t, err)
		for _, o := range opts {
			switch {
			case o.Section == "Service" && o.Name == "ExecStart":
				words = append(words, strings.Fields(o.Value)...)
			case o.Section == "Service" && o.Name == "Environment":
				v := strings.Trim(o.Value, `'"`)
				if rest, ok := strings.CutPrefix(v, "KUBELET_ARGS="); ok {
					words = append(words, strings.Fields(rest)...)
				}
			}
		}
	}
	var flags []string
	for _, w := range words {
		if strings.HasPrefix(w, "--") {
			flags = append(flags, w)
		}
	}
	return flags
}
