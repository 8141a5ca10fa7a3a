// Package goldencase loads the cases of testdata/golden (inputs given to bootstrap.sh
// and the files it wrote) and starts the fake IMDS and EC2 that answer as the golden
// sandbox did. It is shared by the in-process golden tests and the blackbox tests of
// the built binary, so both replay exactly the same inputs.
package goldencase

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/maxpods"
)

// Case is one golden case: case.json plus bootstrap.sh's exit status.
type Case struct {
	// Dir is the case folder; the files bootstrap.sh wrote are under it.
	Dir      string `json:"-"`
	ExitCode int    `json:"-"`
	Name     string `json:"name"`
	Title    string `json:"title"`
	// UserData, when set, names the case's file holding the user data that ran:
	// its steps before its bootstrap.sh call (with Args) made Files.
	UserData       string            `json:"user_data"`
	Args           []string          `json:"args"`
	KubeletVersion string            `json:"kubelet_version"`
	NProc          string            `json:"nproc"`
	Env            map[string]string `json:"env"`
	Files          map[string]string `json:"files"`
	IMDS           imdstest.Instance `json:"imds"`
	DescribeInst   *struct {
		Reservations []struct {
			Instances []struct {
				InstanceID     string `json:"InstanceId"`
				PrivateDNSName string `json:"PrivateDnsName"`
			}
		}
	} `json:"aws_describe_instances"`
	DescribeTypes *struct {
		Hypervisor  string
		CPUCount    int `json:"CpuCount"`
		NetworkInfo struct {
			Ipv4AddressesPerInterface int
			MaximumNetworkInterfaces  int
			DefaultNetworkCardIndex   int
			NetworkCards              []struct {
				NetworkCardIndex         int
				MaximumNetworkInterfaces int
			}
		}
	} `json:"aws_describe_instance_types"`
}

// Load reads the case in dir.
func Load(dir string) (Case, error) {
	var c Case
	b, err := os.ReadFile(filepath.Join(dir, "case.json"))
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("%s: %w", dir, err)
	}
	rc, err := os.ReadFile(filepath.Join(dir, "exit_code"))
	if err != nil {
		return c, err
	}
	if c.ExitCode, err = strconv.Atoi(strings.TrimSpace(string(rc))); err != nil {
		return c, fmt.Errorf("%s: exit_code: %w", dir, err)
	}
	c.Dir = dir
	return c, nil
}

// LoadAll reads every case under dir, in name order.
func LoadAll(dir string) ([]Case, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "*", "case.json"))
	if err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("no golden cases in %s", dir)
	}
	var cases []Case
	for _, p := range paths {
		c, err := Load(filepath.Dir(p))
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	return cases, nil
}

// CPUs is the case's nproc.
func (c Case) CPUs() int {
	n, _ := strconv.Atoi(c.NProc)
	return n
}

// WriteFiles creates the case's input files under root.
func (c Case) WriteFiles(root string) error {
	for p, content := range c.Files {
		hp := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(hp, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Fakes are the fake IMDS and EC2 of a case, both on 127.0.0.1.
type Fakes struct {
	IMDS *imdstest.Server
	EC2  *ec2test.Server
}

// Start starts the fakes with the case's answers. DescribeInstances is refused
// (UnauthorizedOperation) when the case says the golden run's call failed.
func (c Case) Start() (*Fakes, error) {
	metadata, err := imdstest.NewServer(c.IMDS)
	if err != nil {
		return nil, err
	}
	ec2, err := ec2test.NewServer()
	if err != nil {
		metadata.Close()
		return nil, err
	}
	if c.DescribeInst == nil {
		ec2.Update(func(a *ec2test.Answers) {
			a.Errors["DescribeInstances"] = ec2test.Error{Status: 403, Code: "UnauthorizedOperation", Message: "You are not authorized to perform this operation."}
		})
	} else {
		for _, r := range c.DescribeInst.Reservations {
			for _, i := range r.Instances {
				ec2.AddInstance(i.InstanceID, i.PrivateDNSName)
			}
		}
	}
	if d := c.DescribeTypes; d != nil {
		enis := d.NetworkInfo.MaximumNetworkInterfaces
		for _, card := range d.NetworkInfo.NetworkCards {
			if card.NetworkCardIndex == d.NetworkInfo.DefaultNetworkCardIndex {
				enis = card.MaximumNetworkInterfaces
			}
		}
		ec2.Update(func(a *ec2test.Answers) {
			a.Types[c.IMDS.InstanceType] = maxpods.TypeInfo{Hypervisor: d.Hypervisor, VCPUs: d.CPUCount, ENIs: enis, IPv4PerENI: d.NetworkInfo.Ipv4AddressesPerInterface}
		})
	}
	return &Fakes{IMDS: metadata, EC2: ec2}, nil
}

// StartFor starts the case's fakes for a test or benchmark: they stop when it ends,
// and their environment (Env) is set in the process for its duration.
func (c Case) StartFor(tb testing.TB) *Fakes {
	tb.Helper()
	f, err := c.Start()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(f.Close)
	for k, v := range f.Env() {
		tb.Setenv(k, v)
	}
	return f
}

// Env is the environment that points the AWS SDK at the fake EC2, with dummy
// credentials so it never looks for real ones.
func (f *Fakes) Env() map[string]string {
	return map[string]string{
		"AWS_ENDPOINT_URL_EC2":        f.EC2.URL(),
		"AWS_ACCESS_KEY_ID":           "AKIDFAKE",
		"AWS_SECRET_ACCESS_KEY":       "fake",
		"AWS_EC2_METADATA_DISABLED":   "true",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
	}
}

// Close stops both fakes.
func (f *Fakes) Close() {
	f.IMDS.Close()
	f.EC2.Close()
}
