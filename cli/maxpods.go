package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/maxpods"
	"github.com/eksboot/eksboot/rootfs"
)

// ec2Timeout bounds the ec2:DescribeInstanceTypes call for a type the table lacks.
const ec2Timeout = 20 * time.Second

// maxPodsFlags are the options of `eksboot max-pods`: max-pods-calculator.sh's, plus
// eksboot's own.
type maxPodsFlags struct {
	instanceType                       string
	fromIMDS                           bool
	imdsEndpoint                       string
	imdsTimeout                        time.Duration
	cniVersion                         string
	customNetworking, prefixDelegation bool
	securityGroupsForPods, ipv6        bool
	maxENI                             int
	showMaxAllowed                     bool
	rowsFile                           string
	explain                            bool
	output                             string
	help                               bool
}

func (f *maxPodsFlags) flagSet(prog string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetOutput(io.Discard)
	fs.StringVar(&f.instanceType, "instance-type", "", "instance type, such as m5.large")
	fs.BoolVar(&f.fromIMDS, "instance-type-from-imds", false, "read the instance type from the instance metadata (on the node)")
	fs.StringVar(&f.imdsEndpoint, "imds-endpoint", "", "instance metadata service URL [$AWS_EC2_METADATA_SERVICE_ENDPOINT, $IMDS_ENDPOINT host[:port]]")
	fs.DurationVar(&f.imdsTimeout, "imds-timeout", bootstrap.DefaultIMDSTimeout, "deadline for reading the instance metadata")
	fs.StringVar(&f.cniVersion, "cni-version", "", "Amazon VPC CNI version x.y.z (prefix delegation needs 1.9.0 or later; default: recent)")
	fs.BoolVar(&f.customNetworking, "cni-custom-networking-enabled", false, "custom networking: one ENI fewer for pods")
	fs.BoolVar(&f.prefixDelegation, "cni-prefix-delegation-enabled", false, "prefix delegation: a /28 prefix per address slot (nitro types)")
	fs.BoolVar(&f.securityGroupsForPods, "cni-security-groups-for-pods-enabled", false, "security groups for pods (ENABLE_POD_ENI): one ENI fewer for pods")
	fs.BoolVar(&f.ipv6, "cni-ipv6-enabled", false, "IPv6 cluster: only the 110/250 cap limits pods")
	fs.IntVar(&f.maxENI, "cni-max-eni", 0, "the VPC CNI's MAX_ENI: use at most this many ENIs (0: no limit)")
	fs.BoolVar(&f.showMaxAllowed, "show-max-allowed", false, "print the formula's value without the 110/250 cap")
	fs.StringVar(&f.rowsFile, "eni-max-pods-file", "/etc/eks/eni-max-pods.txt", "rows \"<instance-type> <max-pods>\" for types the table lacks (ignored when missing)")
	fs.BoolVar(&f.explain, "explain", false, "also print which facts and formula gave the number")
	fs.StringVar(&f.output, "output", "text", "output format: text or json")
	fs.BoolVarP(&f.help, "help", "h", false, "print this help")
	return fs
}

// check validates the flags into the calculator's options; every problem is one line.
func (f *maxPodsFlags) check(fs *pflag.FlagSet) (maxpods.Options, error) {
	o := maxpods.Options{
		PrefixDelegation: f.prefixDelegation, CustomNetworking: f.customNetworking,
		SecurityGroupsForPods: f.securityGroupsForPods, MaxENI: f.maxENI, IPv6: f.ipv6, Uncapped: f.showMaxAllowed,
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case f.fromIMDS == fs.Changed("instance-type"):
		return o, errors.New("give exactly one of --instance-type TYPE and --instance-type-from-imds")
	case f.maxENI < 0:
		return o, fmt.Errorf("--cni-max-eni %d: want the number of ENIs the VPC CNI may use, 1 or more", f.maxENI)
	case f.ipv6 && (f.showMaxAllowed || f.customNetworking):
		return o, errors.New("--cni-ipv6-enabled: IPv6 pods are limited by the cap alone; drop --show-max-allowed and --cni-custom-networking-enabled")
	case f.output != "text" && f.output != "json":
		return o, fmt.Errorf("--output %q: want text or json", f.output)
	}
	if !f.fromIMDS {
		if err := maxpods.CheckInstanceType(f.instanceType); err != nil {
			return o, fmt.Errorf("--instance-type: %w", err)
		}
	}
	if fs.Changed("cni-version") {
		v, err := maxpods.ParseCNIVersion(f.cniVersion)
		if err != nil {
			return o, fmt.Errorf("--cni-version: %w", err)
		}
		o.CNIVersion = v
	}
	return o, nil
}

// readRows reads the node's eni-max-pods.txt; a missing file has no rows, and a
// malformed line is a usage error naming file:line.
func readRows(path string) ([]maxpods.Row, error) {
	if path == "" {
		return nil, nil
	}
	b, err := rootfs.ReadRegularFile(path, rootfs.DefaultReadLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("--eni-max-pods-file: %w", err)
	}
	rows, bad := maxpods.ParseRows(b)
	if len(bad) > 0 {
		return nil, fmt.Errorf("--eni-max-pods-file %s:%d: %s", path, bad[0].Line, bad[0].Reason)
	}
	return rows, nil
}

// runMaxPods is `eksboot max-pods`: max-pods-calculator.sh's numbers from the
// embedded table (EC2 for types it lacks), with --explain and --output json.
func runMaxPods(prog string, args []string, stdout, stderr io.Writer) int {
	var f maxPodsFlags
	fs := f.flagSet(prog)
	usageErr := func(err error) int {
		fmt.Fprintf(stderr, "%s: %s (see --help)\n", prog, strings.ReplaceAll(err.Error(), "\n", " "))
		return ExitUsage
	}
	if err := fs.Parse(args); err != nil {
		return usageErr(err)
	}
	if f.help {
		fmt.Fprintf(stdout, "Usage: %s [options]\n\nPrints the kubelet max pods for an instance type, as max-pods-calculator.sh does.\n\nOptions:\n%s", prog, fs.FlagUsages())
		return ExitOK
	}
	o, err := f.check(fs)
	if err != nil {
		return usageErr(err)
	}
	req := maxpods.Request{InstanceType: f.instanceType, Options: o, RowsPath: f.rowsFile}
	if req.Rows, err = readRows(f.rowsFile); err != nil {
		return usageErr(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	region, endpoint := "", ""
	if f.fromIMDS {
		if endpoint, err = imds.ResolveEndpoint(f.imdsEndpoint, os.Getenv); err != nil {
			return usageErr(err)
		}
		inst, err := imds.Fetch(ctx, imds.Options{Endpoint: endpoint, Timeout: f.imdsTimeout})
		if err != nil {
			fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
			return ExitFailure
		}
		req.InstanceType, region, req.NodeCPUs = inst.InstanceType, inst.Region, runtime.NumCPU()
	}
	req.Describe = func(ctx context.Context, t string) (maxpods.TypeInfo, error) {
		ctx, cancel := context.WithTimeout(ctx, ec2Timeout)
		defer cancel()
		cfg, err := ec2api.LoadConfig(region, endpoint)
		if err != nil {
			return maxpods.TypeInfo{}, err
		}
		return ec2api.New(cfg).InstanceTypeInfo(ctx, t)
	}
	a := maxpods.Resolve(ctx, req)
	if a.Fallback {
		fmt.Fprintf(stderr, "%s: error: %s\n", prog, strings.TrimSuffix(a.Warnings[len(a.Warnings)-1], fmt.Sprintf("; using max pods %d", maxpods.Default)))
		return ExitFailure
	}
	if f.output == "json" {
		return printJSON(stdout, stderr, prog, req.InstanceType, a)
	}
	fmt.Fprintln(stdout, a.MaxPods)
	if f.explain {
		printExplain(stdout, req.InstanceType, a)
	} else {
		for _, w := range a.Warnings {
			fmt.Fprintf(stderr, "%s: warning: %s\n", prog, w)
		}
	}
	return ExitOK
}

// printExplain prints the facts, the formula and the steps behind a.
func printExplain(w io.Writer, instanceType string, a maxpods.Answer) {
	fmt.Fprintf(w, "instance type: %s\nsource: %s\n", instanceType, a.Source)
	if t := a.Facts; t != nil {
		hyper, vcpus := t.Hypervisor, fmt.Sprint(t.VCPUs)
		if hyper == "" {
			hyper = "none reported"
		}
		if t.VCPUs == 0 {
			vcpus = "unknown"
		}
		fmt.Fprintf(w, "facts: %d ENIs on the default network card, %d IPv4 addresses per ENI, %s vCPUs, hypervisor %s, bare metal %v\n",
			t.ENIs, t.IPv4PerENI, vcpus, hyper, t.BareMetal)
	}
	if r := a.Result; r != nil {
		fmt.Fprintf(w, "formula: %s\n", r.Formula)
		for _, s := range r.Steps {
			fmt.Fprintf(w, "step: %s\n", s)
		}
	}
	for _, s := range a.Warnings {
		fmt.Fprintf(w, "warning: %s\n", s)
	}
}

// maxPodsJSON is the --output json document.
type maxPodsJSON struct {
	InstanceType     string            `json:"instanceType"`
	MaxPods          int               `json:"maxPods"`
	Source           string            `json:"source"`
	Facts            *maxpods.TypeInfo `json:"facts,omitempty"`
	Formula          string            `json:"formula,omitempty"`
	Cap              int               `json:"cap,omitempty"`
	ENIs             int               `json:"enisForPods,omitempty"`
	PrefixDelegation bool              `json:"prefixDelegation"`
	Steps            []string          `json:"steps,omitempty"`
	Warnings         []string          `json:"warnings,omitempty"`
}

func printJSON(stdout, stderr io.Writer, prog, instanceType string, a maxpods.Answer) int {
	doc := maxPodsJSON{InstanceType: instanceType, MaxPods: a.MaxPods, Source: a.Source, Facts: a.Facts, Warnings: a.Warnings}
	if r := a.Result; r != nil {
		doc.Formula, doc.Cap, doc.ENIs, doc.PrefixDelegation, doc.Steps = r.Formula, r.Cap, r.ENIs, r.PrefixDelegation, r.Steps
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", prog, err)
		return ExitFailure
	}
	return ExitOK
}
