package flags

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
)

func noEnv(string) string { return "" }

func TestParseForms(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want func(o bootstrap.Options) string // "" when o is as wanted, else what is wrong
	}{
		{
			name: "space-separated values, value starting with --",
			args: []string{"my-cluster", "--kubelet-extra-args", "--max-pods=58 --node-labels=a=b", "--use-max-pods", "false"},
			want: func(o bootstrap.Options) string {
				if o.ClusterName != "my-cluster" || o.KubeletExtraArgs != "--max-pods=58 --node-labels=a=b" || o.UseMaxPods != "false" {
					return "values not taken"
				}
				return ""
			},
		},
		{
			name: "equals form and flags after the cluster name",
			args: []string{"--dns-cluster-ip=10.0.0.10", "c", "--ip-family=ipv4"},
			want: func(o bootstrap.Options) string {
				if o.ClusterName != "c" || o.DNSClusterIP != "10.0.0.10" || o.IPFamily != "ipv4" {
					return "values not taken"
				}
				return ""
			},
		},
		{
			name: "environment fallbacks, flags win",
			args: []string{"c", "--pause-container-version", "3.9"},
			env:  map[string]string{"PAUSE_CONTAINER_VERSION": "3.1", "KUBELET_EXTRA_ARGS": "--v=4", "API_RETRY_ATTEMPTS": "5", "PAUSE_CONTAINER_IMAGE": "r.example.com/pause"},
			want: func(o bootstrap.Options) string {
				if o.PauseContainerVersion != "3.9" || o.KubeletExtraArgs != "--v=4" || o.APIRetryAttempts != "5" || o.PauseContainerImage != "r.example.com/pause" {
					return "env not applied as fallback"
				}
				return ""
			},
		},
		{
			name: "last repeated flag wins",
			args: []string{"c", "--use-max-pods", "true", "--use-max-pods", "false"},
			want: func(o bootstrap.Options) string {
				if o.UseMaxPods != "false" {
					return "first value kept"
				}
				return ""
			},
		},
		{
			name: "eksboot's own flags",
			args: []string{"c", "--root", "/tmp/r", "--dry-run", "--no-restart", "--imds-endpoint", "http://127.0.0.1:1", "--log-format", "json"},
			want: func(o bootstrap.Options) string {
				if o.Root != "/tmp/r" || !o.DryRun || !o.NoRestart || o.IMDSEndpoint != "http://127.0.0.1:1" || o.LogFormat != "json" {
					return "own flags not taken"
				}
				return ""
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Parse(tc.args, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if msg := tc.want(o); msg != "" {
				t.Errorf("Parse(%q): %s: %+v", tc.args, msg, o)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown flag is not a cluster name", []string{"--foo", "bar", "c"}, "unknown flag: --foo"},
		{"missing value at the end", []string{"c", "--b64-cluster-ca"}, "flag needs an argument: --b64-cluster-ca"},
		{"two positionals", []string{"c", "d"}, "too many arguments"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.args, noEnv)
			var ue *bootstrap.UsageError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) error = %v, want a UsageError containing %q", tc.args, err, tc.want)
			}
		})
	}
}

func TestUsageListsEveryBootstrapFlag(t *testing.T) {
	var b strings.Builder
	Usage(&b, "bootstrap.sh")
	for _, f := range bootstrap.ScriptFlags() {
		if !strings.Contains(b.String(), "--"+f.Name) || !strings.Contains(b.String(), "$"+f.Env) || scriptUsage[f.Name] == "" {
			t.Errorf("usage text lacks --%s or $%s, or the flag its help", f.Name, f.Env)
		}
	}
	if len(scriptUsage) != len(bootstrap.ScriptFlags()) {
		t.Errorf("%d helps for %d bootstrap.sh flags", len(scriptUsage), len(bootstrap.ScriptFlags()))
	}
}

// TestParseFlagGivenAsAValue checks that a value flag followed by another flag, what
// an unquoted empty variable gives, is reported naming both, not as "too many
// arguments"; a value that merely starts with -- is still a value.
func TestParseFlagGivenAsAValue(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string // "" for no error
	}{
		{
			"empty DNS IP",
			[]string{"c", "--dns-cluster-ip", "--use-max-pods", "false"},
			"--dns-cluster-ip: got the flag --use-max-pods as its value (an empty variable?); give a value or leave the flag out",
		},
		{
			"empty CA before an equals flag",
			[]string{"--b64-cluster-ca", "--apiserver-endpoint=https://x.example.com", "c"},
			"--b64-cluster-ca: got the flag --apiserver-endpoint as its value (an empty variable?); give a value or leave the flag out",
		},
		{
			"empty eksboot flag",
			[]string{"c", "--root", "--dry-run"},
			"--root: got the flag --dry-run as its value (an empty variable?); give a value or leave the flag out",
		},
		{
			"two in a row",
			[]string{"c", "--b64-cluster-ca", "--apiserver-endpoint", "--dns-cluster-ip", "10.0.0.10"},
			"--b64-cluster-ca: got the flag --apiserver-endpoint as its value (an empty variable?); give a value or leave the flag out; " +
				"--apiserver-endpoint: got the flag --dns-cluster-ip as its value (an empty variable?); give a value or leave the flag out",
		},
		{"extra args that start with --", []string{"c", "--kubelet-extra-args", "--max-pods=58 --node-labels=a=b", "--use-max-pods", "false"}, ""},
		{"extra args that are one kubelet flag", []string{"c", "--kubelet-extra-args", "--v=4"}, ""},
		{"bool flag before a flag", []string{"c", "--dry-run", "--use-max-pods", "false"}, ""},
		{"after --", []string{"--", "c"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.args, noEnv)
			var ue *bootstrap.UsageError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.want != "" && (err == nil || err.Error() != tc.want || !errors.As(err, &ue)):
				t.Errorf("error %v,\nwant UsageError %q", err, tc.want)
			}
		})
	}
}

// TestFlagsAreTheTestParsers: the bootstrap command's flags are bootstrap.sh's and
// the ones bootstrap's tests parse without pflag (bootstrap/args_test.go's
// TestParseArgsKnowsEveryFlag lists the same names), each with
// bootstrap.DefaultOptions' default.
func TestFlagsAreTheTestParsers(t *testing.T) {
	own := []string{
		"root", "dry-run", "no-restart", "imds-endpoint", "kubelet-version", "image-profile", "log-format", "imds-timeout",
		"discovery-timeout", "imds-v1-fallback", "systemd-timeout", "graceful-shutdown", "shutdown-grace-period",
		"shutdown-grace-period-critical-pods", "max-pods-mode", "max-pods-custom-networking", "max-pods-security-groups-for-pods",
		"max-pods-max-eni", "max-pods-uncapped", "kube-reserved-from-effective-max-pods", "help",
	}
	for _, f := range bootstrap.ScriptFlags() {
		own = append(own, f.Name)
	}
	var o bootstrap.Options
	fs := Bootstrap("bootstrap", &o)
	var got []string
	fs.VisitAll(func(f *pflag.Flag) { got = append(got, f.Name) })
	slices.Sort(got)
	slices.Sort(own)
	if !slices.Equal(got, own) {
		t.Errorf("flags %q\nwant  %q", got, own)
	}
	d := bootstrap.DefaultOptions()
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(o, d) {
		t.Errorf("defaults %+v\nwant     %+v", o, d)
	}
}

// FuzzParse: any command line is parsed, or refused with a UsageError (exit 2), and
// what is parsed validates or is refused the same way: never a panic.
func FuzzParse(f *testing.F) {
	for _, args := range [][]string{
		{"demo", "--b64-cluster-ca", "eA==", "--apiserver-endpoint", "https://x.example.com"},
		{"demo", "--b64-cluster-ca=eA==", "--dns-cluster-ip", "10.100.0.10,10.100.0.11", "--graceful-shutdown"},
		{"--kubelet-extra-args", "--a='b c' %n $X", "--use-max-pods", "TRUE", "c"},
		{"--foo", "bar"},
		{"-h"},
		{"c", "--dns-cluster-ip", "--use-max-pods"},
		{"--", "c", "d"},
		{"--shutdown-grace-period", "1m", "--max-pods-max-eni", "x"},
	} {
		f.Add(strings.Join(args, "\x00"))
	}
	f.Fuzz(func(t *testing.T, joined string) {
		o, err := Parse(strings.Split(joined, "\x00"), noEnv)
		if err == nil && !o.Help {
			_, err = bootstrap.Validate(o)
		}
		var ue *bootstrap.UsageError
		if err != nil && !errors.As(err, &ue) {
			t.Fatalf("error %v is not a UsageError", err)
		}
	})
}
