package bootstrap

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/aws/smithy-go"
	"go.uber.org/zap"

	"github.com/eksboot/eksboot/ec2api"
	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/rootfs"
)

// Node paths eksboot reads or writes.
const (
	pathCA                = "/etc/kubernetes/pki/ca.crt"
	pathKubeconfig        = "/var/lib/kubelet/kubeconfig"
	pathKubeletConfig     = "/etc/kubernetes/kubelet/kubelet-config.json"
	pathKubeletUnit       = "/etc/systemd/system/kubelet.service"
	pathArgsDropIn        = "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"
	pathExtraArgsDropIn   = "/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"
	pathContainerdConfig  = "/etc/containerd/config.toml"
	pathContainerdAMI     = "/etc/eks/containerd/containerd-config.toml"
	pathSandboxUnitAMI    = "/etc/eks/containerd/sandbox-image.service"
	pathSandboxUnit       = "/etc/systemd/system/sandbox-image.service"
	pathBPFUnit           = "/etc/systemd/system/sys-fs-bpf.mount"
	pathKubeletVersionTxt = "/etc/eks/kubelet-version.txt"
	pathContainerdVersion = "/etc/eks/containerd-version.txt"
	pathOSRelease         = "/etc/os-release"
	pathBaseRuntimeSpec   = "/etc/containerd/base-runtime-spec.json"
	pathNvidiaRuntime     = "/usr/bin/nvidia-container-runtime"
	pathPCIDevices        = "/sys/bus/pci/devices"
	pathCredentialConfig  = kubeletconf.CredentialProviderConfig
	pathFIPS              = "/proc/sys/crypto/fips_enabled"
	pathMounts            = "/proc/mounts"
)

// Facts are what eksboot learns from the node, IMDS and EC2 before it computes
// anything. Gathering them is the only step with outside effects before the writes.
type Facts struct {
	Instance       imds.Facts
	KubeletVersion kubeletconf.Version
	// Kubelet is the kubelet table's row for KubeletVersion.
	Kubelet kubeletconf.KubeletRow
	// Profile is the node image's profile, detected or from --image-profile.
	Profile Profile
	// ContainerdMajor is the image's containerd major version, from ContainerdSource.
	ContainerdMajor  int
	ContainerdSource string
	// CredentialConfigOnImage: the image has an image credential provider config.
	CredentialConfigOnImage bool
	// NvidiaRuntime is the path of nvidia-container-runtime when the image has it;
	// NvidiaGPU is set when an NVIDIA PCI device is present.
	NvidiaRuntime string
	NvidiaGPU     bool
	// RuncBinary is the image's runc, written into containerd's config on the
	// profiles that name it (AL2023: /usr/sbin/runc); "" leaves containerd's PATH.
	RuncBinary string
	CPUs       int
	// PrivateDNSName is the node name: EC2's PrivateDnsName, or IMDS local-hostname
	// when EC2 could not say.
	PrivateDNSName string
	// MaxPods and MaxPodsSource: the table, the node's eni-max-pods.txt, EC2's
	// instance-type facts or the default, with the formula (maxpods.go).
	MaxPods       int
	MaxPodsSource string
	// FIPSHost is set when FIPS mode is on and the ecr-fips registry host resolves.
	FIPSHost bool
	// BPFMounted is set when a bpf file system is mounted or its unit exists.
	BPFMounted bool
	// ContainerdTemplate is the containerd config template and where it came from;
	// nil: the embedded template for the image's containerd.
	ContainerdTemplate       []byte
	ContainerdTemplateSource string
	// SandboxImageUnit is the AMI's sandbox-image.service, nil when the AMI has none.
	SandboxImageUnit []byte
	// ClusterCache is the cache of the discovered cluster, written with the other
	// files; nil when --b64-cluster-ca and --apiserver-endpoint were both given.
	ClusterCache *rootfs.File
	// Warnings are facts that could not be had and the fallback used.
	Warnings []string
}

// gatherFacts reads everything the computation needs. IMDS comes first (the region is
// needed for EC2); the EC2 and DNS look-ups then run in parallel.
func gatherFacts(ctx context.Context, c *Config, env *Env) (*Facts, error) {
	f := &Facts{CPUs: env.CPUs()}
	var err error
	if f.KubeletVersion, err = kubeletVersion(ctx, c.KubeletVersion, env); err != nil {
		return nil, err
	}
	var warning string
	if f.Kubelet, warning = kubeletconf.Kubelet(f.KubeletVersion); warning != "" {
		f.Warnings = append(f.Warnings, warning)
	}
	if !f.KubeletVersion.AtLeast(1, 24) && !c.ContainerdChosen {
		// bootstrap.sh's default below 1.24 is dockerd, which eksboot does not drive.
		return nil, &UsageError{msg: fmt.Sprintf("kubelet %s: below Kubernetes 1.24 bootstrap.sh's default runtime is dockerd, which eksboot does not support; pass --container-runtime containerd", f.KubeletVersion)}
	}
	if err := readNodeFiles(c, env, f); err != nil {
		return nil, err
	}
	if err := readImage(ctx, c, env, f); err != nil {
		return nil, err
	}
	endpoint, err := imds.ResolveEndpoint(c.IMDSEndpoint, env.Getenv)
	if err != nil {
		return nil, &UsageError{msg: err.Error()}
	}
	// The EC2 side starts as soon as the identity document gives the region and
	// instance ID, while IMDS's other paths are read: on a real node the EC2 call is
	// the slowest part of gathering by far.
	ectx, cancelEarly := context.WithCancel(ctx)
	early := &earlyEC2{}
	all := []*earlyEC2{early}
	defer func() {
		cancelEarly()
		for _, e := range all {
			e.wait()
		}
	}()
	inst, err := env.IMDS(ctx, imds.Options{
		Endpoint: endpoint, Timeout: c.IMDSTimeout, AllowIMDSv1: c.IMDSv1Fallback,
		// The node IP: a 404 is IMDS not ready yet. Not when discovery may still turn
		// the cluster's IP family to IPv6 (an IPv6-only instance has no local-ipv4).
		RequireLocalIPv4: c.IPFamily == "ipv4" && !c.discovers(),
		// The IPv6 addresses only where they may be the node IP.
		IPv6: c.IPFamily == "ipv6" || c.discovers(),
		OnIdentity: func(id imds.Identity) {
			if id.InstanceID != "" {
				early.start(ectx, env, id, endpoint)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	f.Instance = *inst
	if f.Instance.Domain == "" {
		d, ok := domainForRegion(f.Instance.Region)
		if !ok {
			return nil, fmt.Errorf("imds: latest/meta-data/services/domain is missing and region %q has no known domain", f.Instance.Region)
		}
		f.Warnings = append(f.Warnings, fmt.Sprintf("IMDS has no services/domain; using %s, the domain of region %s", d, f.Instance.Region))
		f.Instance.Domain = d
	}
	if err := discoverCluster(ctx, c, f, env, endpoint); err != nil {
		return nil, err
	}

	if !early.started(f.Instance.Region, f.Instance.InstanceID) {
		// No instance ID in the identity document, or another one than
		// meta-data/instance-id (the one that counts): ask again, for that one.
		early = &earlyEC2{}
		all = append(all, early)
		early.start(ectx, env, imds.Identity{Region: f.Instance.Region, InstanceID: f.Instance.InstanceID}, endpoint)
	}
	api, apiErr := early.client()
	var wg sync.WaitGroup
	var mu sync.Mutex
	warn := func(s string) { mu.Lock(); f.Warnings = append(f.Warnings, s); mu.Unlock() }
	wg.Go(func() {
		name, err := early.dnsName()
		if err != nil {
			warn(fmt.Sprintf("ec2:DescribeInstances gave no PrivateDnsName for %s (%v); using IMDS local-hostname %q as the node name", f.Instance.InstanceID, err, f.Instance.LocalHostname))
			name = f.Instance.LocalHostname
		}
		f.PrivateDNSName = name
	})
	wg.Go(func() {
		f.MaxPods, f.MaxPodsSource = maxPods(ctx, c, env, api, apiErr, f.Instance.InstanceType, f.CPUs, warn)
	})
	wg.Go(func() { f.FIPSHost = fipsHost(ctx, c, env, &f.Instance) })
	wg.Wait()
	if f.PrivateDNSName == "" {
		return nil, errors.New("no node name: EC2 gave no PrivateDnsName and IMDS latest/meta-data/local-hostname is empty")
	}
	return f, nil
}

// readNodeFiles reads the node's own files the computation depends on.
func readNodeFiles(c *Config, env *Env, f *Facts) error {
	f.ContainerdTemplate, f.ContainerdTemplateSource = nil, "embedded"
	if c.ContainerdConfigFile != "" {
		b, err := env.Files.ReadFile(c.ContainerdConfigFile)
		if errors.Is(err, fs.ErrNotExist) {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: no such file (under --root %s)", c.ContainerdConfigFile, c.Root)}
		}
		if err != nil {
			return &UsageError{msg: fmt.Sprintf("--containerd-config-file %q: %v", c.ContainerdConfigFile, err)}
		}
		f.ContainerdTemplate, f.ContainerdTemplateSource = b, c.ContainerdConfigFile
	} else if b, err := optional(env.Files.ReadFile(pathContainerdAMI)); err != nil {
		return err
	} else if b != nil {
		f.ContainerdTemplate, f.ContainerdTemplateSource = b, pathContainerdAMI
	}
	var err error
	if f.SandboxImageUnit, err = optional(env.Files.ReadFile(pathSandboxUnitAMI)); err != nil {
		return err
	}
	mounts, err := optional(env.Files.ReadFile(pathMounts))
	if err != nil {
		return err
	}
	unit, err := optional(env.Files.ReadFile(pathBPFUnit))
	if err != nil {
		return err
	}
	f.BPFMounted = unit != nil || bpfMounted(mounts)
	return nil
}

// optional turns a missing file into nil content.
func optional(b []byte, err error) ([]byte, error) {
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// bpfMounted reports whether /proc/mounts lists a bpf file system or /sys/fs/bpf.
func bpfMounted(mounts []byte) bool {
	s := bufio.NewScanner(bytes.NewReader(mounts))
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) >= 3 && (fields[2] == "bpf" || fields[1] == "/sys/fs/bpf") {
			return true
		}
	}
	return false
}

// kubeletVersion takes the flag (parsed by Validate), else
// /etc/eks/kubelet-version.txt, else `kubelet --version`.
func kubeletVersion(ctx context.Context, flag kubeletconf.Version, env *Env) (kubeletconf.Version, error) {
	if !flag.IsZero() {
		return flag, nil
	}
	b, err := optional(env.Files.ReadFile(pathKubeletVersionTxt))
	if err != nil {
		return kubeletconf.Version{}, err
	}
	if b != nil {
		v, err := kubeletconf.FindVersion(string(b))
		if err != nil {
			return kubeletconf.Version{}, fmt.Errorf("%s: %w", pathKubeletVersionTxt, err)
		}
		return v, nil
	}
	out, err := env.KubeletVersion(ctx)
	if err != nil {
		return kubeletconf.Version{}, fmt.Errorf("kubelet version: no --kubelet-version, no %s, and `kubelet --version` failed: %w", pathKubeletVersionTxt, err)
	}
	v, err := kubeletconf.FindVersion(out)
	if err != nil {
		return kubeletconf.Version{}, fmt.Errorf("`kubelet --version` printed %q: %w", strings.TrimSpace(out), err)
	}
	return v, nil
}

// readImage learns what kind of image the root is: its profile (--image-profile, else
// from /etc/os-release), its containerd's major version
// (/etc/eks/containerd-version.txt, else `containerd --version` on the node itself,
// else the profile's), whether it ships an image credential provider config, and
// NVIDIA's runtime and devices.
func readImage(ctx context.Context, c *Config, env *Env, f *Facts) error {
	if c.ImageProfile != "" {
		f.Profile, _ = lookupProfile(c.ImageProfile, "--image-profile")
	} else {
		osRelease, err := optional(env.Files.ReadFile(pathOSRelease))
		if err != nil {
			return err
		}
		f.Profile = detectProfile(osRelease)
	}

	f.ContainerdMajor, f.ContainerdSource = f.Profile.ContainerdMajor, "the "+f.Profile.Name+" image's default"
	b, err := optional(env.Files.ReadFile(pathContainerdVersion))
	if err != nil {
		return err
	}
	text, from := string(b), pathContainerdVersion
	if b == nil && env.OnNode() && env.ContainerdVersion != nil {
		if out, err := env.ContainerdVersion(ctx); err == nil {
			text, from = out, "containerd --version"
		}
	}
	if text != "" {
		v, err := kubeletconf.FindVersion(text)
		if err != nil {
			return fmt.Errorf("containerd version: %s: %w", from, err)
		}
		f.ContainerdMajor, f.ContainerdSource = v.Major, from+" ("+v.String()+")"
	}

	if _, err := env.Files.Stat(pathCredentialConfig); err == nil {
		f.CredentialConfigOnImage = true
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if p := f.Profile.RuncBinary; p != "" {
		if st, err := env.Files.Stat(p); err == nil && st.Mode().IsRegular() {
			f.RuncBinary = p
		}
	}
	if st, err := env.Files.Stat(pathNvidiaRuntime); err == nil && st.Mode().IsRegular() {
		f.NvidiaRuntime = pathNvidiaRuntime
	}
	devices, err := env.Files.ReadDir(pathPCIDevices)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, d := range devices {
		vendor, err := env.Files.ReadFile(pathPCIDevices + "/" + d + "/vendor")
		if err == nil && strings.TrimSpace(string(vendor)) == nvidiaPCIVendor {
			f.NvidiaGPU = true
			break
		}
	}
	return nil
}

// nvidiaPCIVendor is NVIDIA's PCI vendor ID, as /sys/bus/pci/devices/*/vendor shows it.
const nvidiaPCIVendor = "0x10de"

// earlyEC2 is the EC2 client and the node-name call, started before the rest of the
// instance facts are in.
type earlyEC2 struct {
	region, instanceID string
	clientReady        chan struct{} // closed when api and apiErr are set
	api                ec2api.API
	apiErr             error
	nameReady          chan struct{} // closed when name and nameErr are set
	name               string
	nameErr            error
}

// start makes the EC2 client for id.Region and asks it for id.InstanceID's private DNS
// name, in the background.
func (e *earlyEC2) start(ctx context.Context, env *Env, id imds.Identity, endpoint string) {
	e.region, e.instanceID = id.Region, id.InstanceID
	e.clientReady, e.nameReady = make(chan struct{}), make(chan struct{})
	go func() {
		e.api, e.apiErr = env.EC2(ctx, id.Region, endpoint)
		close(e.clientReady)
		switch {
		case e.apiErr != nil:
			e.nameErr = e.apiErr
		case id.InstanceID == "":
			e.nameErr = errors.New("no instance ID")
		default:
			e.name, e.nameErr = privateDNSName(ctx, e.api, id.InstanceID, env)
		}
		close(e.nameReady)
	}()
}

// started reports whether start ran for this region and instance.
func (e *earlyEC2) started(region, instanceID string) bool {
	return e.nameReady != nil && e.region == region && e.instanceID == instanceID
}

// client waits for the EC2 client.
func (e *earlyEC2) client() (ec2api.API, error) {
	<-e.clientReady
	return e.api, e.apiErr
}

// dnsName waits for the node-name call.
func (e *earlyEC2) dnsName() (string, error) {
	<-e.nameReady
	return e.name, e.nameErr
}

// wait waits for the background work, if any (cancel its context first to hurry it).
func (e *earlyEC2) wait() {
	if e.nameReady != nil {
		<-e.nameReady
	}
}

// privateDNSName asks EC2 for the instance's PrivateDnsName, as bootstrap.sh's
// private-dns-name helper does, retrying while the answer is empty or the instance
// is not visible yet. Where EC2 cannot answer (no permission, no endpoint) the caller
// falls back to IMDS local-hostname with a warning instead of failing the boot.
func privateDNSName(ctx context.Context, api ec2api.API, instanceID string, env *Env) (string, error) {
	attempts, interval := env.DNSNameAttempts, env.DNSNameInterval
	for i := 0; ; i++ {
		name, err := api.PrivateDNSName(ctx, instanceID)
		if err == nil {
			return name, nil
		}
		if !dnsNameRetryable(err) || i+1 >= attempts {
			return "", err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(interval):
		}
	}
}

// dnsNameRetryable reports whether EC2 may still give the name on a later attempt: the
// name is empty, or the instance is not visible to the API yet (eventual consistency
// just after launch).
func dnsNameRetryable(err error) bool {
	var apiErr smithy.APIError
	return errors.Is(err, ec2api.ErrEmptyDNSName) ||
		(errors.As(err, &apiErr) && apiErr.ErrorCode() == "InvalidInstanceID.NotFound")
}

// fipsHost reports whether FIPS mode is on and the region's ecr-fips host resolves, in
// which case the pause image comes from there (get-ecr-uri.sh's rule).
func fipsHost(ctx context.Context, c *Config, env *Env, inst *imds.Facts) bool {
	if c.PauseContainerImage != "" {
		return false
	}
	b, err := env.Files.ReadFile(pathFIPS)
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return false
	}
	account, region := ecrRegistry(inst.Region, c.PauseContainerAccount)
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := env.LookupHost(lctx, ECRHost(account, region, inst.Domain, true))
	return err == nil && len(addrs) > 0
}

// domainForRegion derives the AWS DNS suffix of a commercial, GovCloud or China
// region, for the rare IMDS that does not serve services/domain. Other partitions'
// domains are not guessed.
func domainForRegion(region string) (string, bool) {
	if !regionRE().MatchString(region) {
		return "", false
	}
	switch {
	case strings.HasPrefix(region, "cn-"):
		return "amazonaws.com.cn", true
	case strings.Contains(region, "-iso"), strings.HasPrefix(region, "eusc-"):
		return "", false
	}
	return "amazonaws.com", true
}

var regionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z]{2}(-[a-z]+)+-[0-9]+$`) })

// logFacts logs what was learned, without secrets.
func logFacts(log *zap.Logger, f *Facts) {
	log.Info("instance facts",
		zap.String("instanceType", f.Instance.InstanceType),
		zap.String("region", f.Instance.Region),
		zap.String("instanceID", f.Instance.InstanceID),
		zap.String("kubelet", f.KubeletVersion.String()),
		zap.String("imageProfile", f.Profile.Name),
		zap.String("imageProfileReason", f.Profile.Reason),
		zap.Int("containerdMajor", f.ContainerdMajor),
		zap.String("containerdVersion", f.ContainerdSource),
		zap.Int("cpus", f.CPUs),
		zap.Int("maxPods", f.MaxPods),
		zap.String("maxPodsSource", f.MaxPodsSource),
		zap.String("nodeName", f.PrivateDNSName),
		zap.String("containerdTemplate", f.ContainerdTemplateSource))
}
