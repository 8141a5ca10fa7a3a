// Command demo is `make demo`: it runs the shipped eksboot binary end to end on a
// simulated m5.large in us-west-2 and prints what it wrote. The simulation lives here,
// not in the binary: this program serves the fake IMDS and EC2 API on 127.0.0.1,
// makes a throw-away cluster CA and a temporary root (an AL2023 image's layout, or a
// bare root for AL2), then starts `eksboot bootstrap` as a node's user data would,
// with --root and --imds-endpoint pointing at them and --no-restart (no systemd).
// The binary under test is the one `make build` made, byte for byte the one an image
// ships; its log (stderr) shows each step and its duration. Nothing leaves the
// machine.
//
// Usage: go run ./internal/demo [--binary bin/eksboot] [--keep] [--image-profile al2023|al2]
package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"time"

	"github.com/spf13/pflag"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/internal/selfsigned"
)

// usageLine is the demo's synopsis, shown by --help and after a usage error.
const usageLine = "usage: demo [--binary PATH] [--keep] [--image-profile al2023|al2]"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the demo's flags.
type options struct {
	binary  string
	keep    bool
	profile string
}

// run parses args and runs the demo: exit 0, 1 when the demo failed, 2 for usage.
func run(args []string, stdout, stderr io.Writer) int {
	o := options{binary: "bin/eksboot", profile: bootstrap.ProfileAL2023}
	flags := pflag.NewFlagSet("demo", pflag.ContinueOnError)
	flags.SetOutput(io.Discard)
	flags.StringVar(&o.binary, "binary", o.binary, "the eksboot binary to run (make build writes bin/eksboot)")
	flags.BoolVar(&o.keep, "keep", false, "keep the temporary root")
	flags.StringVar(&o.profile, "image-profile", o.profile, "the simulated node image: al2023 (today's EKS images, kubelet 1.35) or al2 (the Amazon Linux 2 layout, kubelet 1.32)")
	err := flags.Parse(args)
	switch {
	case errors.Is(err, pflag.ErrHelp):
		fmt.Fprintf(stdout, "%s\n\nRuns eksboot bootstrap end to end against a simulated instance, into a temporary root.\n\n%s", usageLine, flags.FlagUsagesWrapped(100))
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "demo: %v (%s)\n", err, usageLine)
		return 2
	case flags.NArg() > 0:
		fmt.Fprintf(stderr, "demo: unexpected arguments %q (%s)\n", flags.Args(), usageLine)
		return 2
	case o.profile != bootstrap.ProfileAL2 && o.profile != bootstrap.ProfileAL2023:
		fmt.Fprintf(stderr, "demo: --image-profile %q: want al2 or al2023\n", o.profile)
		return 2
	}
	if err := demo(o, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "demo: error: %v\n", err)
		return 1
	}
	return 0
}

// demo runs o.binary against the simulated instance and prints the files it wrote.
func demo(o options, stdout, stderr io.Writer) error {
	bin, err := filepath.Abs(o.binary)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return fmt.Errorf("--binary: %w (run make build first)", err)
	}
	inst := imdstest.DefaultInstance()
	metadata, err := imdstest.NewServer(inst)
	if err != nil {
		return err
	}
	defer metadata.Close()
	ec2, err := ec2test.NewServer()
	if err != nil {
		return err
	}
	defer ec2.Close()
	ec2.AddInstance(inst.InstanceID, inst.LocalHostname)
	der, err := selfsigned.CA("kubernetes", time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	if err != nil {
		return err
	}
	ca := selfsigned.PEM(der)
	dir, err := os.MkdirTemp("", "eksboot-demo-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(dir)
	}
	kubelet, image := "v1.32.9-eks-113cf36", "a bare root (the AL2 layout)"
	if o.profile == bootstrap.ProfileAL2023 {
		kubelet, image = "v1.35.1-eks-113cf36", "an Amazon Linux 2023 EKS image"
		if err := (imagefixture.AL2023{KubeletVersion: kubelet}).Write(dir); err != nil {
			return err
		}
	}
	before, err := readTree(dir)
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "bootstrap",
		"demo-cluster",
		"--b64-cluster-ca", base64.StdEncoding.EncodeToString(ca),
		"--apiserver-endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com",
		"--kubelet-extra-args", "--node-labels=eksboot.dev/demo=true",
		"--root", dir,
		"--imds-endpoint", metadata.URL(),
		"--kubelet-version", kubelet,
		"--image-profile", o.profile,
		"--no-restart",
	)
	// The AWS SDK reads its EC2 endpoint and credentials from the environment: point
	// it at the fake EC2 and give it dummy keys so it never looks for real ones. (On
	// this simulated instance, whose local-hostname is EC2's own name, eksboot makes
	// no EC2 call at all; the fake is there to count that.)
	cmd.Env = append(os.Environ(),
		"AWS_ENDPOINT_URL_EC2="+ec2.URL(),
		"AWS_ACCESS_KEY_ID=AKIDEKSBOOTDEMO",
		"AWS_SECRET_ACCESS_KEY=demo",
		"AWS_EC2_METADATA_DISABLED=true",
	)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	fmt.Fprintf(stdout, "eksboot demo: a simulated %s in %s (IMDS %s, EC2 %s), root %s\n",
		inst.InstanceType, inst.Region, metadata.URL(), ec2.URL(), dir)
	fmt.Fprintf(stdout, "image profile: %s (--image-profile %s), kubelet %s, on %s\n", o.profile, o.profile, kubelet, image)
	fmt.Fprintf(stdout, "running: %s bootstrap demo-cluster ... --root %s --imds-endpoint %s --no-restart\n\n", bin, dir, metadata.URL())
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s bootstrap: %w", bin, err)
	}
	took := time.Since(start)
	if err := printTree(stdout, dir, before); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "eksboot bootstrap took %v (the whole process); %d IMDS requests, %d EC2 calls\n", took.Round(time.Microsecond),
		len(metadata.Requests()), ec2.Calls("DescribeInstances")+ec2.Calls("DescribeInstanceTypes"))
	if o.keep {
		fmt.Fprintf(stdout, "the root is kept in %s\n", dir)
	}
	return nil
}

// readTree returns every regular file under dir as node path -> content.
func readTree(dir string) (map[string][]byte, error) {
	tree := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		tree["/"+filepath.ToSlash(rel)] = b
		return err
	})
	return tree, err
}

// printTree prints every file under dir that is new or differs from before (the
// simulated image's own files) with its mode and content; the CA is not printed.
func printTree(w io.Writer, dir string, before map[string][]byte) error {
	after, err := readTree(dir)
	if err != nil {
		return err
	}
	paths := make([]string, 0, len(after))
	for p := range after {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		b := after[p]
		if old, ok := before[p]; ok && bytes.Equal(old, b) {
			continue
		}
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p)))
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "==> %s (%04o, %d bytes)\n", p, st.Mode().Perm(), len(b))
		if filepath.Base(p) == "ca.crt" {
			fmt.Fprintf(w, "(the cluster CA: not printed)\n\n")
			continue
		}
		fmt.Fprintf(w, "%s\n", b)
	}
	return nil
}
