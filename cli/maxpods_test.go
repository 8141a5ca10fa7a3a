package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/maxpods"
)

// maxPodsRun runs `eksboot max-pods args...` with no node eni-max-pods.txt unless
// args name one.
func maxPodsRun(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	all := append([]string{"eksboot", "max-pods", "--eni-max-pods-file", filepath.Join(t.TempDir(), "none")}, args...)
	var stdout, stderr bytes.Buffer
	code := Main(all, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// TestMaxPodsCalculatorNumbers runs the verified max-pods-calculator.sh examples of
// maxpods-notes.md §4.3 through the command line.
func TestMaxPodsCalculatorNumbers(t *testing.T) {
	tests := []struct {
		typ  string
		args []string
		want string
	}{
		{"m5.8xlarge", nil, "234\n"},
		{"m5.8xlarge", []string{"--cni-prefix-delegation-enabled"}, "250\n"},
		{"m5.8xlarge", []string{"--cni-prefix-delegation-enabled", "--show-max-allowed"}, "3714\n"},
		{"m5.8xlarge", []string{"--cni-custom-networking-enabled"}, "205\n"},
		{"m5.8xlarge", []string{"--cni-prefix-delegation-enabled", "--cni-max-eni", "2", "--show-max-allowed"}, "930\n"},
		{"m5.8xlarge", []string{"--cni-prefix-delegation-enabled", "--cni-version", "1.8.0"}, "234\n"},
		{"m4.xlarge", nil, "58\n"},
		{"m4.xlarge", []string{"--cni-prefix-delegation-enabled"}, "58\n"},
		{"m4.xlarge", []string{"--cni-custom-networking-enabled"}, "44\n"},
		{"m4.xlarge", []string{"--cni-prefix-delegation-enabled", "--cni-max-eni", "2", "--show-max-allowed"}, "30\n"},
		{"c6in.32xlarge", nil, "250\n"},
		{"c6in.32xlarge", []string{"--show-max-allowed"}, "394\n"},
		{"c6in.32xlarge", []string{"--cni-prefix-delegation-enabled", "--show-max-allowed"}, "6274\n"},
		{"c6in.32xlarge", []string{"--cni-prefix-delegation-enabled", "--cni-max-eni", "2", "--show-max-allowed"}, "1570\n"},
		{"m5.large", []string{"--cni-ipv6-enabled"}, "110\n"},
		{"m5.large", []string{"--cni-security-groups-for-pods-enabled"}, "20\n"},
	}
	for _, tc := range tests {
		t.Run(tc.typ+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			code, stdout, stderr := maxPodsRun(t, append([]string{"--instance-type", tc.typ, "--cni-version", "1.10.0"}, tc.args...)...)
			if code != 0 || stdout != tc.want || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

func TestMaxPodsBadInput(t *testing.T) {
	rows := filepath.Join(t.TempDir(), "eni-max-pods.txt")
	if err := os.WriteFile(rows, []byte("# mine\nzz9.large many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no type", nil, "give exactly one of --instance-type TYPE and --instance-type-from-imds"},
		{"both", []string{"--instance-type", "m5.large", "--instance-type-from-imds"}, "give exactly one of --instance-type TYPE and --instance-type-from-imds"},
		{"empty type", []string{"--instance-type", ""}, "--instance-type: instance type is empty; want <family>.<size> such as m5.large"},
		{"malformed type", []string{"--instance-type", "m5.LARGE"}, `--instance-type: instance type "m5.LARGE": 'L' is not allowed; want <family>.<size> such as m5.large`},
		{"CNI version not x.y.z", []string{"--instance-type", "m5.large", "--cni-version", "1.10"}, `--cni-version: CNI version "1.10": want x.y.z, such as 1.18.0`},
		{"negative max ENI", []string{"--instance-type", "m5.large", "--cni-max-eni", "-1"}, "--cni-max-eni -1: want the number of ENIs the VPC CNI may use, 1 or more"},
		{"max ENI not a number", []string{"--instance-type", "m5.large", "--cni-max-eni", "two"}, `invalid argument "two" for "--cni-max-eni" flag`},
		{"ipv6 uncapped", []string{"--instance-type", "m5.large", "--cni-ipv6-enabled", "--show-max-allowed"}, "--cni-ipv6-enabled: IPv6 pods are limited by the cap alone"},
		{"bad output", []string{"--instance-type", "m5.large", "--output", "yaml"}, `--output "yaml": want text or json`},
		{"unknown flag", []string{"--instance-type", "m5.large", "--nope"}, "unknown flag: --nope"},
		{"argument", []string{"--instance-type", "m5.large", "extra"}, `unexpected arguments ["extra"]`},
		{"malformed override row", []string{"--instance-type", "m5.large", "--eni-max-pods-file", rows}, "--eni-max-pods-file " + rows + `:2: max pods of zz9.large: want a whole number from 1 to 65535, got "many"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := maxPodsRun(t, tc.args...)
			if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "eksboot max-pods: ") || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and one line containing %q", code, stdout, stderr, tc.want)
			}
		})
	}
}

func TestMaxPodsExplainAndJSON(t *testing.T) {
	code, stdout, _ := maxPodsRun(t, "--instance-type", "m5.large", "--cni-prefix-delegation-enabled", "--explain")
	want := "110\ninstance type: m5.large\nsource: table\n" +
		"facts: 3 ENIs on the default network card, 10 IPv4 addresses per ENI, 2 vCPUs, hypervisor nitro, bare metal false\n" +
		"formula: 3 * ((10 - 1) * 16) + 2 = 434\nstep: cap 110 (2 vCPUs <= 30): gives 110\n"
	if code != 0 || stdout != want {
		t.Errorf("--explain: exit %d, stdout\n%s\nwant\n%s", code, stdout, want)
	}

	code, stdout, _ = maxPodsRun(t, "--instance-type", "m5.large", "--cni-custom-networking-enabled", "--output", "json")
	var got maxPodsJSON
	if err := json.Unmarshal([]byte(stdout), &got); err != nil || code != 0 {
		t.Fatalf("--output json: exit %d, %v: %s", code, err, stdout)
	}
	if got.MaxPods != 20 || got.Source != "table" || got.Formula != "2 * (10 - 1) + 2 = 20" || got.Cap != 110 || got.ENIs != 2 ||
		got.Facts == nil || *got.Facts != (maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 2, MemoryMiB: 8192, ENIs: 3, IPv4PerENI: 10}) {
		t.Errorf("--output json = %+v", got)
	}
}

func TestMaxPodsFromIMDS(t *testing.T) {
	srv, err := imdstest.NewServer(imdstest.DefaultInstance()) // an m5.large
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	code, stdout, stderr := maxPodsRun(t, "--instance-type-from-imds", "--imds-endpoint", srv.URL(), "--cni-version", "1.10.0")
	if code != 0 || stdout != "29\n" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 0 and 29", code, stdout, stderr)
	}
}

func TestMaxPodsUnknownType(t *testing.T) {
	ec2, err := ec2test.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer ec2.Close()
	ec2.Update(func(a *ec2test.Answers) {
		a.Types["zz9.8xlarge"] = maxpods.TypeInfo{Hypervisor: "nitro", VCPUs: 32, ENIs: 8, IPv4PerENI: 30}
	})
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_EC2": ec2.URL(), "AWS_REGION": "us-west-2", "AWS_ACCESS_KEY_ID": "AKIDFAKE",
		"AWS_SECRET_ACCESS_KEY": "fake", "AWS_EC2_METADATA_DISABLED": "true", "AWS_CONFIG_FILE": os.DevNull, "AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	} {
		t.Setenv(k, v)
	}
	rows := filepath.Join(t.TempDir(), "eni-max-pods.txt")
	if err := os.WriteFile(rows, []byte("zz9.large 17\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, typ  string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"EC2 facts", "zz9.8xlarge", []string{"--cni-prefix-delegation-enabled", "--show-max-allowed"}, 0, "3714\n", ""},
		{"a row of the node's file", "zz9.large", []string{"--eni-max-pods-file", rows, "--show-max-allowed"}, 0, "17\n", ""},
		{
			"nobody knows it", "zz9.xlarge",
			[]string{"--eni-max-pods-file", rows},
			1, "",
			`eksboot max-pods: error: instance type "zz9.xlarge" is not in the max-pods table, has no row in ` + rows + ", ec2:DescribeInstanceTypes did not help (",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := maxPodsRun(t, append([]string{"--instance-type", tc.typ}, tc.args...)...)
			if code != tc.wantCode || stdout != tc.wantStdout || !strings.Contains(stderr, tc.wantStderr) || tc.wantStderr == "" && stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q, %q", code, stdout, stderr, tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}
