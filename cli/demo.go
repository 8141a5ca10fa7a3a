package cli

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/ec2api/ec2test"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/imagefixture"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/spf13/pflag"
)

// runDemo runs the bootstrap end to end on a simulated m5.large in us-west-2: an
// in-process fake IMDS and EC2 API on 127.0.0.1, a throw-away cluster CA, a temporary
// root and no systemd. It prints the files written; the log on stderr shows each step
// and its duration. Nothing leaves the machine.
func runDemo(args []string, stdout, stderr io.Writer) int {
	var keep bool
	profile := bootstrap.ProfileAL2023
	fs := pflag.NewFlagSet("eksboot demo", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.BoolVar(&keep, "keep", false, "keep the temporary root")
	fs.StringVar(&profile, "image-profile", profile, "the simulated node image: al2023 (today's EKS images, kubelet 1.35) or al2 (the Amazon Linux 2 layout, kubelet 1.32)")
	switch err := fs.Parse(args); {
	case err != nil:
		fmt.Fprintf(stderr, "eksboot demo: %v (want [--keep] [--image-profile al2|al2023])\n", err)
		return exitUsage
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "eksboot demo: unexpected arguments %q (want [--keep] [--image-profile al2|al2023])\n", fs.Args())
		return exitUsage
	case profile != bootstrap.ProfileAL2 && profile != bootstrap.ProfileAL2023:
		fmt.Fprintf(stderr, "eksboot demo: --image-profile %q: want al2 or al2023\n", profile)
		return exitUsage
	}
	if err := demo(stdout, stderr, keep, profile); err != nil {
		fmt.Fprintf(stderr, "eksboot demo: error: %v\n", err)
		return exitFailure
	}
	return exitOK
}

func demo(stdout, stderr io.Writer, keep bool, profile string) error {
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

	// The AWS SDK reads its endpoint and credentials from the environment: point it
	// at the fake EC2 and give it dummy keys so it never looks for real ones.
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL_EC2":      ec2.URL(),
		"AWS_ACCESS_KEY_ID":         "AKIDEKSBOOTDEMO",
		"AWS_SECRET_ACCESS_KEY":     "demo",
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		if err := os.Setenv(k, v); err != nil {
			return err
		}
	}
	ca, err := demoCA()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "eksboot-demo-")
	if err != nil {
		return err
	}
	if !keep {
		defer os.RemoveAll(dir)
	}
	root, err := rootfs.New(dir)
	if err != nil {
		return err
	}
	kubelet, image := "v1.32.9-eks-113cf36", "a bare root (the AL2 layout)"
	if profile == bootstrap.ProfileAL2023 {
		kubelet, image = "v1.35.1-eks-113cf36", "an Amazon Linux 2023 EKS image"
		if err := (imagefixture.AL2023{KubeletVersion: kubelet}).Write(dir); err != nil {
			return err
		}
	}
	before, err := readTree(dir)
	if err != nil {
		return err
	}
	c, _, err := bootstrap.FromFlags([]string{
		"demo-cluster",
		"--b64-cluster-ca", base64.StdEncoding.EncodeToString(ca),
		"--apiserver-endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com",
		"--kubelet-extra-args", "--node-labels=eksboot.dev/demo=true",
		"--root", dir,
		"--imds-endpoint", metadata.URL(),
		"--kubelet-version", kubelet,
		"--image-profile", profile,
		"--no-restart",
	}, func(string) string { return "" })
	if err != nil {
		return err
	}
	log, err := newLogger("console", stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "eksboot demo: a simulated %s in %s (IMDS %s, EC2 %s), root %s\n",
		inst.InstanceType, inst.Region, metadata.URL(), ec2.URL(), dir)
	fmt.Fprintf(stdout, "image profile: %s (--image-profile %s), kubelet %s, on %s\n\n", profile, profile, kubelet, image)
	env := bootstrap.DefaultEnv(root, log, stdout, stderr)
	start := time.Now()
	if err := bootstrap.Run(context.Background(), c, env); err != nil {
		return err
	}
	_ = log.Sync()
	took := time.Since(start)
	if err := printTree(stdout, dir, before); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bootstrap took %v; %d IMDS requests, %d EC2 calls\n", took.Round(time.Microsecond),
		len(metadata.Requests()), ec2.Calls("DescribeInstances")+ec2.Calls("DescribeInstanceTypes"))
	if keep {
		fmt.Fprintf(stdout, "the root is kept in %s\n", dir)
	}
	return nil
}

// printTree prints every file under dir that differs from before (node path ->
// content: the simulated image's own files) with its mode and content.
func printTree(w io.Writer, dir string, before map[string][]byte) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return err
	}
	sort.Strings(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if old, ok := before["/"+filepath.ToSlash(rel)]; ok && bytes.Equal(old, b) {
			continue
		}
		fmt.Fprintf(w, "==> /%s (%04o, %d bytes)\n", rel, st.Mode().Perm(), len(b))
		if filepath.Base(p) == "ca.crt" {
			fmt.Fprintf(w, "(the cluster CA: not printed)\n\n")
			continue
		}
		fmt.Fprintf(w, "%s\n", b)
	}
	return nil
}

// demoCA returns a throw-away self-signed CA certificate in PEM.
func demoCA() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kubernetes"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}
