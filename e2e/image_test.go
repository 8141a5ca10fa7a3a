//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// imdsAddr is where the box's fake IMDS listens: loopback, inside the box.
const imdsAddr = "127.0.0.1:1338"

// build holds what every box is made from.
type build struct {
	repo    string // the repository
	base    string // the cached Debian root
	deb     string // eksboot's DEB (make package)
	imdsd   string // the fake IMDS as a process (e2e/imdsd)
	pause   string // the local images' program (e2e/pause)
	k8s     map[string]string
	apiBins string // kube-apiserver, kubectl and etcd
	pki     *pki
}

// provision makes the box's root into a node image: what an EKS AMI has that
// Debian lacks (the kubelet, the credential provider's config), eksboot from its DEB
// (dpkg --root: its scripts run in the box's root, as the RPM's do in an AMI's
// build), then the test's furniture:
// the fake IMDS, the API server and etcd, the IAM authenticator stand-in and
// cloud-init's data source pointed at the fake.
func provision(t *testing.T, b *box, bl *build, kubelet string, inst imdstest.Instance, endpointHost string) {
	t.Helper()
	copyFile(t, filepath.Join(kubelet, "kubelet"), filepath.Join(b.root, "usr/bin/kubelet"), 0o755)

	out, err := exec.Command("dpkg", "--root", b.root, "-i", bl.deb).CombinedOutput()
	if err != nil {
		t.Fatalf("dpkg --root <box> -i %s: %v\n%s", filepath.Base(bl.deb), err, out)
	}
	t.Logf("dpkg --root <box> -i %s:\n%s", filepath.Base(bl.deb), strings.TrimSpace(string(out)))

	// The EKS AMI ships the ECR credential provider and its config, which the
	// kubelet's command line names; the box has the config and a provider that is
	// never asked (no image is pulled from ECR here).
	if _, err := b.readRoot("etc/eks/image-credential-provider/config.json"); err != nil {
		b.write("etc/eks/image-credential-provider/config.json", 0o644, `{
  "apiVersion": "kubelet.config.k8s.io/v1",
  "kind": "CredentialProviderConfig",
  "providers": [
    {
      "name": "ecr-credential-provider",
      "matchImages": ["*.dkr.ecr.*.amazonaws.com"],
      "defaultCacheDuration": "12h",
      "apiVersion": "credentialprovider.kubelet.k8s.io/v1"
    }
  ]
}
`)
	}
	if _, err := b.readRoot("etc/eks/image-credential-provider/ecr-credential-provider"); err != nil {
		b.write("etc/eks/image-credential-provider/ecr-credential-provider", 0o755,
			"#!/bin/sh\necho 'make e2e: no ECR here' >&2\nexit 1\n")
	}

	// The fake IMDS, on loopback, before cloud-init and eksboot; its unit also gives
	// the box's loopback the node's address, which the kubelet wants on an interface.
	copyFile(t, bl.imdsd, filepath.Join(b.root, "usr/local/bin/e2e-imdsd"), 0o755)
	instJSON, err := json.MarshalIndent(inst, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	b.write("etc/e2e/instance.json", 0o600, string(instJSON)+"\n")
	b.write("etc/systemd/system/e2e-imds.service", 0o644, fmt.Sprintf(`# make e2e: the fake instance metadata service (e2e/imdsd), loopback only.
[Unit]
Description=e2e: fake IMDS on %[1]s
DefaultDependencies=no
Before=sysinit.target cloud-init-local.service cloud-init.service eksboot-config.service

[Service]
Type=notify
ExecStartPre=ip address replace %[2]s/32 dev lo
# -imdsv1: cloud-init identifies EC2 from DMI data, which a container lacks, and
# then reads IMDS without a token; eksboot always asks for one.
ExecStart=/usr/local/bin/e2e-imdsd -listen %[1]s -instance /etc/e2e/instance.json -imdsv1

[Install]
WantedBy=sysinit.target
`, imdsAddr, inst.LocalIPv4))
	b.enable("e2e-imds.service", "sysinit.target")
	// What systemd does on a virtual machine but not in a container: the cgroup v1
	// controllers writable (nspawn mounts them read-only; the kubelet and containerd
	// make cgroups) and the BPF file system mounted at /sys/fs/bpf (systemd mounts it
	// at boot, except in a container).
	b.write("etc/systemd/system/e2e-api-fs.service", 0o644, `# make e2e: the API file systems of a virtual machine.
[Unit]
Description=e2e: writable cgroup controllers, /sys/fs/bpf
DefaultDependencies=no
Before=sysinit.target containerd.service kubelet.service eksboot-config.service cloud-init-local.service

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c 'for d in /sys/fs/cgroup/*/; do mount -o remount,bind,rw "$d" || exit 1; done'
# nspawn's /sys is a read-only tmpfs with a few sysfs folders; fs/bpf is not one.
ExecStart=/bin/sh -c 'mount -o remount,bind,rw /sys && mkdir -p /sys/fs/bpf && mount -o remount,bind,ro /sys'
ExecStart=/bin/mount -t bpf -o rw,nosuid,nodev,noexec,relatime,mode=700 bpf /sys/fs/bpf

[Install]
WantedBy=sysinit.target
`)
	b.enable("e2e-api-fs.service", "sysinit.target")
	for _, s := range kernelSettings {
		b.write("etc/e2e/sysctl/"+filepath.Base(s.path), 0o644, s.value+"\n")
	}

	// eksboot and the user data's scripts (cloud-final runs them) read IMDS there.
	for _, unit := range []string{"eksboot-config.service", "eksboot-run.service", "cloud-final.service"} {
		b.write("etc/systemd/system/"+unit+".d/50-e2e-imds.conf", 0o644,
			"# make e2e: the fake IMDS of the box.\n[Service]\nEnvironment=AWS_EC2_METADATA_SERVICE_ENDPOINT=http://"+imdsAddr+"\n")
	}
	// cloud-init's own configuration: its EC2 data source, at the fake. The box has
	// no network interface to configure, and only the C.UTF-8 locale.
	b.write("etc/cloud/cloud.cfg.d/99-e2e.cfg", 0o644, `# make e2e: the EC2 data source, at the box's fake IMDS.
datasource_list: [ Ec2 ]
datasource:
  Ec2:
    metadata_urls: [ "http://`+imdsAddr+`" ]
    max_wait: 60
    timeout: 10
    strict_id: false
network:
  config: disabled
# The image has no locales but C.UTF-8 (Debian's default, en_US.UTF-8, fails).
locale: C.UTF-8
`)

	// The API server and etcd, in the box's network namespace: the endpoint's host
	// name is the box's loopback.
	hosts, err := b.readRoot("etc/hosts")
	if err != nil {
		t.Fatal(err)
	}
	b.write("etc/hosts", 0o644, hosts+"127.0.0.1 "+endpointHost+"\n")
	for _, bin := range []string{"etcd", "kube-apiserver"} {
		copyFile(t, filepath.Join(bl.apiBins, bin), filepath.Join(b.root, "usr/local/bin", bin), 0o755)
	}
	b.write("etc/e2e/pki/ca.crt", 0o644, string(bl.pki.caCert))
	b.write("etc/e2e/pki/apiserver.crt", 0o644, string(bl.pki.servingCert))
	b.write("etc/e2e/pki/apiserver.key", 0o600, string(bl.pki.servingKey))
	b.write("etc/e2e/pki/sa.key", 0o600, string(bl.pki.saKey))
	b.write("etc/e2e/pki/sa.pub", 0o644, string(bl.pki.saPub))
	// The kubelet's token is a node's identity, as EKS maps the node role: the user
	// system:node:<node name> in the group system:nodes, which the Node authorizer
	// and the NodeRestriction admission plugin check (the name is the instance's,
	// which eksboot gives the kubelet).
	b.write("etc/e2e/pki/tokens.csv", 0o600, fmt.Sprintf("%s,system:node:%s,e2e-kubelet,system:nodes\n%s,e2e-admin,e2e-admin,system:masters\n",
		bl.pki.kubeletToken, inst.LocalHostname, bl.pki.adminToken))
	// The cluster exists before the node boots: etcd and the API server start first
	// in the box, beside systemd's own early units (no default dependencies), so
	// that they are up when the kubelet first asks; e2e-apiserver-ready says when
	// (the timelines show it).
	b.write("etc/systemd/system/e2e-etcd.service", 0o644, `# make e2e: the API server's etcd, loopback only.
[Unit]
Description=e2e: etcd
DefaultDependencies=no
Conflicts=shutdown.target
Before=shutdown.target

[Service]
ExecStart=/usr/local/bin/etcd --name=e2e --data-dir=/var/lib/e2e-etcd --unsafe-no-fsync \
    --listen-client-urls=http://127.0.0.1:2379 --advertise-client-urls=http://127.0.0.1:2379 \
    --listen-peer-urls=http://127.0.0.1:2380 --initial-advertise-peer-urls=http://127.0.0.1:2380 \
    --initial-cluster=e2e=http://127.0.0.1:2380 --listen-metrics-urls=http://127.0.0.1:2381

[Install]
WantedBy=sysinit.target
`)
	b.enable("e2e-etcd.service", "sysinit.target")
	b.write("etc/systemd/system/e2e-apiserver.service", 0o644, `# make e2e: the cluster's API server, serving the endpoint of the user data on 443.
[Unit]
Description=e2e: kube-apiserver
Wants=e2e-etcd.service
After=e2e-etcd.service
DefaultDependencies=no
Conflicts=shutdown.target
Before=shutdown.target

[Service]
ExecStart=/usr/local/bin/kube-apiserver --etcd-servers=http://127.0.0.1:2379 \
    --secure-port=443 --advertise-address=`+inst.LocalIPv4+` \
    --tls-cert-file=/etc/e2e/pki/apiserver.crt --tls-private-key-file=/etc/e2e/pki/apiserver.key \
    --client-ca-file=/etc/e2e/pki/ca.crt --token-auth-file=/etc/e2e/pki/tokens.csv \
    --service-account-issuer=https://kubernetes.default.svc --service-account-key-file=/etc/e2e/pki/sa.pub \
    --service-account-signing-key-file=/etc/e2e/pki/sa.key --service-cluster-ip-range=10.100.0.0/16 \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --allow-privileged=true --profiling=false
Restart=on-failure
RestartSec=1

[Install]
WantedBy=sysinit.target
`)
	b.enable("e2e-apiserver.service", "sysinit.target")
	b.write("usr/local/bin/e2e-apiserver-ready", 0o755, `#!/usr/bin/python3
# make e2e: wait until the API server answers /readyz (at most two minutes).
import socket, ssl, sys, time, urllib.request
ctx = ssl.create_default_context(cafile="/etc/e2e/pki/ca.crt")
ctx.check_hostname = False
for _ in range(1200):
    try:
        if urllib.request.urlopen("https://127.0.0.1:443/readyz", context=ctx, timeout=2).status == 200:
            sys.exit(0)
    except (OSError, ssl.SSLError):
        pass
    time.sleep(0.1)
sys.exit("the API server did not become ready in two minutes")
`)
	b.write("etc/systemd/system/e2e-apiserver-ready.service", 0o644, `# make e2e: when the box's API server is ready (the timelines show it).
[Unit]
Description=e2e: kube-apiserver ready
Wants=e2e-apiserver.service
After=e2e-apiserver.service
DefaultDependencies=no
Conflicts=shutdown.target
Before=shutdown.target

[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/usr/local/bin/e2e-apiserver-ready

[Install]
WantedBy=multi-user.target
`)
	b.enable("e2e-apiserver-ready.service", "multi-user.target")

	// The one stand-in: IAM authentication. The kubeconfig eksboot writes runs
	// aws-iam-authenticator (or aws eks get-token); here both print the API server's
	// static token for the kubelet.
	stub := fmt.Sprintf(`#!/bin/sh
# make e2e: the stand-in for AWS IAM authentication, which cannot exist in the box:
# an ExecCredential with the box's API server's static token for the kubelet.
v=$(printf '%%s' "${KUBERNETES_EXEC_INFO:-}" | sed -n 's/.*"apiVersion":"\([^"]*\)".*/\1/p')
printf '{"kind":"ExecCredential","apiVersion":"%%s","spec":{},"status":{"token":"%s"}}\n' "${v:-client.authentication.k8s.io/v1beta1}"
`, bl.pki.kubeletToken)
	b.write("usr/bin/aws-iam-authenticator", 0o755, stub)
	b.write("usr/local/bin/aws", 0o755, stub)
}

func copyFile(t *testing.T, src, dst string, mode os.FileMode) {
	t.Helper()
	// No fork while the file is open for writing: a child forked meanwhile (another
	// box's exec) holds the descriptor until it execs, and running the copy then
	// fails with ETXTBSY ("Text file busy", install.sh's kubelet --version).
	syscall.ForkLock.RLock()
	defer syscall.ForkLock.RUnlock()
	in, err := os.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
