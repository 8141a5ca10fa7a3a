package bootstrap

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/maxpods"
)

func TestValidateMaxPodsFlags(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    maxpods.Options
		wantErr string
	}{
		{"default: bootstrap.sh's number", nil, maxpods.Options{Uncapped: true}, ""},
		{"secondary-ip", []string{"--max-pods-mode", "secondary-ip"}, maxpods.Options{}, ""},
		{"prefix delegation and custom networking", []string{"--max-pods-mode=prefix-delegation", "--max-pods-custom-networking"}, maxpods.Options{PrefixDelegation: true, CustomNetworking: true}, ""},
		{
			"every modifier",
			[]string{"--max-pods-mode", "secondary-ip", "--max-pods-security-groups-for-pods", "--max-pods-max-eni", "2", "--max-pods-uncapped"},
			maxpods.Options{SecurityGroupsForPods: true, MaxENI: 2, Uncapped: true},
			"",
		},
		{"ipv6", []string{"--max-pods-mode", "ipv6", "--ip-family", "ipv6", "--service-ipv6-cidr", "fd00:10:96::/112"}, maxpods.Options{IPv6: true}, ""},
		{"unknown mode", []string{"--max-pods-mode", "calculator"}, maxpods.Options{}, `--max-pods-mode "calculator": want eni-max-pods, secondary-ip, prefix-delegation or ipv6`},
		{"ipv6 on ipv4", []string{"--max-pods-mode", "ipv6"}, maxpods.Options{}, "--max-pods-mode ipv6 needs --ip-family ipv6 (on an IPv4 cluster pods are limited by the ENIs: use secondary-ip or prefix-delegation)"},
		{"modifier with the default mode", []string{"--max-pods-custom-networking"}, maxpods.Options{}, "--max-pods-custom-networking needs --max-pods-mode secondary-ip or prefix-delegation (not eni-max-pods)"},
		{
			"modifier with ipv6",
			[]string{"--max-pods-mode", "ipv6", "--ip-family", "ipv6", "--service-ipv6-cidr", "fd00:10:96::/112", "--max-pods-uncapped"},
			maxpods.Options{},
			"--max-pods-uncapped needs --max-pods-mode secondary-ip or prefix-delegation (not ipv6)",
		},
		{
			"negative max ENI",
			[]string{"--max-pods-mode", "secondary-ip", "--max-pods-max-eni", "-1"},
			maxpods.Options{},
			"--max-pods-max-eni -1: want the number of ENIs the VPC CNI may use (MAX_ENI), 1 or more",
		},
		{
			"bad --max-pods in the extra args",
			[]string{"--kube-reserved-from-effective-max-pods", "--kubelet-extra-args", "--max-pods=lots"},
			maxpods.Options{},
			`--kube-reserved-from-effective-max-pods: --kubelet-extra-args --max-pods "lots": want a whole number of pods, 1 or more`,
		},
		{"bad --max-pods ignored without the flag", []string{"--kubelet-extra-args", "--max-pods=lots"}, maxpods.Options{Uncapped: true}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := parseArgs(validArgs(t, tc.args...), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Validate(o)
			if tc.wantErr != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || err.Error() != tc.wantErr {
					t.Fatalf("Validate error = %v, want the usage error %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || c.MaxPodsOptions != tc.want {
				t.Fatalf("Validate = %+v, %v; want max pods options %+v", c.MaxPodsOptions, err, tc.want)
			}
		})
	}
}

func TestExtraArgsMaxPods(t *testing.T) {
	tests := []struct {
		args    string
		want    int
		wantErr string
	}{
		{"", 0, ""},
		{"--node-labels=a=b", 0, ""},
		{"--max-pods=58", 58, ""},
		{"--node-labels=a=b --max-pods 20 --v=2", 20, ""},
		{"--max-pods=20 --max-pods=30", 30, ""},
		{"--max-pods", 0, "--max-pods has no value"},
		{"--max-pods=0", 0, `--max-pods "0": want a whole number of pods, 1 or more`},
	}
	for _, tc := range tests {
		got, err := extraArgsMaxPods(strings.Fields(tc.args))
		if got != tc.want || (err == nil) != (tc.wantErr == "") || err != nil && err.Error() != tc.wantErr {
			t.Errorf("extraArgsMaxPods(%q) = %d, %v; want %d, %q", tc.args, got, err, tc.want, tc.wantErr)
		}
	}
}

// maxPodsAndReserved returns .maxPods (nil when absent) and kubeReserved memory.
func maxPodsAndReserved(t *testing.T, dir string) (any, any) {
	t.Helper()
	k := kubeletConfig(t, dir)
	return k["maxPods"], k["kubeReserved"].(map[string]any)["memory"]
}

func TestMaxPodsModes(t *testing.T) {
	tests := []struct {
		name         string
		typ          string
		args         []string
		describe     string // DescribeInstanceTypes answer for the type, JSON
		files        map[string]string
		wantMaxPods  any
		wantReserved string
		wantWarning  string
	}{
		{"default: the table, as bootstrap.sh", "m5.large", nil, "", nil, 29.0, "574Mi", ""},
		{"prefix delegation: capped at 110", "m5.large", []string{"--max-pods-mode", "prefix-delegation"}, "", nil, 110.0, "1465Mi", ""},
		{"custom networking", "m5.large", []string{"--max-pods-mode", "secondary-ip", "--max-pods-custom-networking"}, "", nil, 20.0, "475Mi", ""},
		{"secondary-ip caps c5.4xlarge", "c5.4xlarge", []string{"--max-pods-mode", "secondary-ip"}, "", nil, 110.0, "1465Mi", ""},
		{
			"a row of the node's file for an unknown type", "zz9.large", nil, "",
			map[string]string{pathENIMaxPods: "# mine\nzz9.large 17\n"},
			17.0, "442Mi", "",
		},
		{
			"a malformed row is reported and skipped", "zz9.large", nil, "",
			map[string]string{pathENIMaxPods: "zz9.large seventeen\nzz9.large 17\n"},
			17.0, "442Mi",
			`/etc/eks/eni-max-pods.txt:1: max pods of zz9.large: want a whole number from 1 to 65535, got "seventeen"; the line is skipped`,
		},
		{
			"the node's row does not override the table", "m5.large", nil, "",
			map[string]string{pathENIMaxPods: "m5.large 110\n"},
			29.0, "574Mi",
			"/etc/eks/eni-max-pods.txt:1: m5.large 110 is ignored: the table has m5.large (29), and rows count only for types it lacks",
		},
		{
			"EC2 facts with prefix delegation", "zz9.large",
			[]string{"--max-pods-mode", "prefix-delegation"},
			`{"Hypervisor":"nitro","CpuCount":48,"NetworkInfo":{"Ipv4AddressesPerInterface":15,"MaximumNetworkInterfaces":4,"DefaultNetworkCardIndex":0,"NetworkCards":[{"NetworkCardIndex":0,"MaximumNetworkInterfaces":4}]}}`,
			nil, 250.0, "3005Mi", "",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := base(t)
			c.IMDS.InstanceType = tc.typ
			c.Args = append(c.Args, tc.args...)
			c.Files = tc.files
			if tc.describe != "" {
				must(t, jsonUnmarshal(tc.describe, &c.DescribeTypes))
			}
			core, logs := observer.New(zap.InfoLevel)
			dir, err := runCase(t, c, zap.New(core))
			must(t, err)
			gotMax, gotReserved := maxPodsAndReserved(t, dir)
			if gotMax != tc.wantMaxPods || gotReserved != tc.wantReserved {
				t.Errorf("maxPods %v, kubeReserved memory %v; want %v and %s", gotMax, gotReserved, tc.wantMaxPods, tc.wantReserved)
			}
			if w := warnings(logs); tc.wantWarning != "" && !strings.Contains(w, tc.wantWarning) || tc.wantWarning == "" && w != "" {
				t.Errorf("warnings %q, want %q", w, tc.wantWarning)
			}
		})
	}
}

func TestKubeReservedFromEffectiveMaxPods(t *testing.T) {
	// Golden case 03: m5.large (table: 29) with --use-max-pods false and --max-pods=58
	// in --kubelet-extra-args, so the kubelet runs 58 pods.
	tests := []struct {
		name         string
		args         []string
		wantMaxPods  any
		wantReserved string
	}{
		{"bootstrap.sh: reserved for the table's 29", nil, nil, "574Mi"},
		{"reserved for the kubelet's 58", []string{"--kube-reserved-from-effective-max-pods"}, nil, "893Mi"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := golden(t, "03-dnsip-nomaxpods-extraargs")
			c.Args = append(c.Args, tc.args...)
			dir, err := runCase(t, c, zap.NewNop())
			must(t, err)
			if gotMax, gotReserved := maxPodsAndReserved(t, dir); gotMax != tc.wantMaxPods || gotReserved != tc.wantReserved {
				t.Errorf("maxPods %v, kubeReserved memory %v; want %v and %s", gotMax, gotReserved, tc.wantMaxPods, tc.wantReserved)
			}
		})
	}
	t.Run("use-max-pods false without --max-pods: the kubelet's 110", func(t *testing.T) {
		c := base(t)
		c.Args = append(c.Args, "--use-max-pods", "false", "--kube-reserved-from-effective-max-pods")
		dir, err := runCase(t, c, zap.NewNop())
		must(t, err)
		if gotMax, gotReserved := maxPodsAndReserved(t, dir); gotMax != nil || gotReserved != "1465Mi" {
			t.Errorf("maxPods %v, kubeReserved memory %v; want none and 1465Mi", gotMax, gotReserved)
		}
	})
}

// TestUnknownTypeEC2Unreachable points EC2 at a closed port of 127.0.0.1: both EC2
// calls fail (after the SDK's bounded retries), max pods falls back to 110 with a
// warning naming the type and what was tried, and the node is configured.
func TestUnknownTypeEC2Unreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	closed := "http://" + ln.Addr().String()
	must(t, ln.Close())
	c := base(t)
	c.IMDS.InstanceType = "zz9.large"
	core, logs := observer.New(zap.InfoLevel)
	dir, err := runCaseWith(t, c, zap.New(core), func(*Env) { t.Setenv("AWS_ENDPOINT_URL_EC2", closed) })
	must(t, err)
	if gotMax, gotReserved := maxPodsAndReserved(t, dir); gotMax != 110.0 || gotReserved != "1465Mi" {
		t.Errorf("maxPods %v, kubeReserved memory %v; want 110 and 1465Mi", gotMax, gotReserved)
	}
	w := warnings(logs)
	for _, want := range []string{`instance type "zz9.large" is not in the max-pods table, has no row in /etc/eks/eni-max-pods.txt, ec2:DescribeInstanceTypes did not help (`, "connection refused", "; using max pods 110"} {
		if !strings.Contains(w, want) {
			t.Errorf("warnings lack %q:\n%s", want, w)
		}
	}
	for _, p := range []string{"etc/kubernetes/kubelet/kubelet-config.json", "etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "var/lib/kubelet/kubeconfig"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err != nil {
			t.Errorf("node not configured: %v", err)
		}
	}
}

// TestUnknownTypeEC2RetriesAreBounded makes DescribeInstanceTypes fail with a
// retryable error: EC2 is asked ec2api.MaxAttempts times, then 110 is used.
func TestUnknownTypeEC2RetriesAreBounded(t *testing.T) {
	c := base(t)
	c.IMDS.InstanceType = "zz9.large"
	fakes, err := c.Start()
	must(t, err)
	t.Cleanup(fakes.Close)
	fakes.EC2.Update(func(a *ec2test.Answers) {
		a.Errors["DescribeInstanceTypes"] = ec2test.Error{Status: 503, Code: "Unavailable", Message: "The service is unavailable."}
	})
	dir, err := runCaseWith(t, c, zap.NewNop(), func(*Env) { t.Setenv("AWS_ENDPOINT_URL_EC2", fakes.EC2.URL()) })
	must(t, err)
	if got := fakes.EC2.Calls("DescribeInstanceTypes"); got != ec2api.MaxAttempts {
		t.Errorf("DescribeInstanceTypes asked %d times, want %d (the retryer's bound)", got, ec2api.MaxAttempts)
	}
	if gotMax, _ := maxPodsAndReserved(t, dir); gotMax != 110.0 {
		t.Errorf("maxPods %v, want 110", gotMax)
	}
}

// golden loads the golden case name.
func golden(t *testing.T, name string) goldencase.Case {
	t.Helper()
	c, err := goldencase.Load(filepath.Join(goldenDir, name))
	must(t, err)
	return c
}

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }
