//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/testtools"
)

func sociMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// sociModule is the build-only module of eksboot's soci-snapshotter-grpc
// (tools/soci: a main of its own on github.com/awslabs/soci-snapshotter's library).
const sociModule = "soci"

// sociBinary returns soci-snapshotter-grpc built from tools/soci with cgo (the
// library's ztoc/compression uses zlib: Debian's gcc and zlib1g-dev), cached as
// soci-<version>-<key>.
func sociBinary(t *testing.T) (string, error) {
	version, err := moduleVersion(sociModule, "github.com/awslabs/soci-snapshotter")
	if err != nil {
		return "", err
	}
	modDir, err := filepath.Abs(filepath.Join("tools", sociModule))
	if err != nil {
		return "", err
	}
	var parts []string
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(modDir, f))
		if err != nil {
			return "", err
		}
		parts = append(parts, string(b))
	}
	goVersion, err := exec.Command("go", "version").Output()
	if err != nil {
		return "", err
	}
	dir, err := cached(t, "soci-"+strings.TrimPrefix(version, "v")+"-"+key(append(parts, string(goVersion))...), func(dir string) error {
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", filepath.Join(dir, "soci-snapshotter-grpc"), ".")
		cmd.Dir = modDir
		cmd.Env = append(os.Environ(), "CGO_ENABLED=1", "GOFLAGS=-mod=readonly")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("go build (cgo: apt-get install gcc zlib1g-dev): %w\n%s", err, tail(string(out), 40))
		}
		return nil
	})
	return filepath.Join(dir, "soci-snapshotter-grpc"), err
}

// fastImagePullNodeConfig is a NodeConfig with FastImagePull, the user data of
// nodeadm's TestContainerdConfig Case7 (../shared/peer/nodeadm-unit/containerd-v2-template-fast-image-pull).
const fastImagePullNodeConfig = `apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: my-cluster
    apiServerEndpoint: https://example.com
    certificateAuthority: %s
    cidr: 10.100.0.0/16
  featureGates:
    FastImagePull: true
`

// renderSections is `eksboot render`'s files by path.
func renderSections(out string) map[string]string {
	files := map[string]string{}
	var cur string
	var buf strings.Builder
	flush := func() {
		if cur != "" {
			files[cur] = strings.TrimRight(buf.String(), "\n") + "\n"
		}
		buf.Reset()
	}
	for _, line := range strings.SplitAfter(out, "\n") {
		if p, ok := strings.CutPrefix(line, "==> "); ok {
			flush()
			cur = strings.TrimSpace(p)
			continue
		}
		buf.WriteString(line)
	}
	flush()
	return files
}

// TestFastImagePullWithTheRealSnapshotter renders a FastImagePull node on the AL2023
// profile (containerd 2) with the real eksboot binary, and runs what it wrote: the
// SOCI snapshotter (eksboot's main on the soci-snapshotter library, tools/soci) with
// eksboot's /etc/soci-snapshotter-grpc/config.toml, read by the library's own
// parser, and containerd 2 (tools/containerd2) with eksboot's config.toml. Only the
// node paths are moved under a temporary root (containerd's root, state and socket,
// the proxy plugin's socket and the base runtime spec's path; the snapshotter's
// socket and image service); every other setting is as rendered. It checks that
// containerd's soci snapshotter plugin is ok, that an image imported into it is
// unpacked by the snapshotter (its layer a committed soci snapshot, the way the
// cached pause image is imported at boot), that a container runs on that snapshot,
// and that systemd accepts the ordering
// drop-in (containerd requires and follows soci-snapshotter.service). The SOCI
// snapshotter needs /dev/fuse and overlayfs.
func TestFastImagePullWithTheRealSnapshotter(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("make e2e needs root (containerd, overlay mounts)")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Fatalf("the SOCI snapshotter needs /dev/fuse (modprobe fuse): %v", err)
	}
	ctrd, err := containerd2Binaries(t)
	if err != nil {
		t.Fatal(err)
	}
	soci, err := sociBinary(t)
	if err != nil {
		t.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "soci-e2e-") // short: unix socket paths
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })

	// eksboot's files.
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	// eksboot render execs the eksboot-render beside it (make build's bin/ layout).
	eksboot := filepath.Join(tmp, "eksboot")
	build := exec.Command("go", "build", "-tags", testtools.NodeTags, "-o", tmp+"/", "./cmd/eksboot", "./cmd/eksboot-render")
	build.Dir, build.Env = repo, append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build eksboot eksboot-render: %v\n%s", err, out)
	}
	ca := base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testtools.SelfSignedCA(t)}))
	ud := filepath.Join(tmp, "user-data")
	sociMust(t, os.WriteFile(ud, fmt.Appendf(nil, fastImagePullNodeConfig, ca), 0o600))
	out, err := exec.Command(eksboot, "render", "--user-data", ud, "--instance-type", "m5.xlarge", "--region", "us-west-2",
		"--image-profile", "al2023", "--kubelet-version", "1.35.0").CombinedOutput()
	if err != nil {
		t.Fatalf("eksboot render: %v\n%s", err, out)
	}
	files := renderSections(string(out))
	const (
		containerdPath = "/etc/containerd/config.toml"
		sociPath       = "/etc/soci-snapshotter-grpc/config.toml"
		dropInPath     = "/etc/systemd/system/containerd.service.d/10-soci-snapshotter.conf"
		kubeletPath    = "/etc/kubernetes/kubelet/kubelet-config.json"
	)
	for _, p := range []string{containerdPath, sociPath, dropInPath, kubeletPath} {
		if files[p] == "" {
			t.Fatalf("eksboot render wrote no %s:\n%s", p, out)
		}
	}
	if !strings.Contains(files[kubeletPath], `"imageServiceEndpoint": "unix://`+renderedSOCISocket+`"`) {
		t.Errorf("the kubelet's image service is not the snapshotter's socket:\n%s", files[kubeletPath])
	}

	ctrdSock, sociSock := relocate(t, files, tmp)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := func(name string, args ...string) *bytes.Buffer {
		var log bytes.Buffer
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.Env = append(os.Environ(), "PATH="+ctrd+":"+os.Getenv("PATH"))
		sociMust(t, cmd.Start())
		t.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			done := make(chan struct{})
			go func() { _ = cmd.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
			if t.Failed() {
				t.Logf("%s:\n%s", filepath.Base(name), tail(log.String(), 40))
			}
		})
		return &log
	}
	waitSocket := func(p string, log *bytes.Buffer) {
		for ctx.Err() == nil {
			if c, err := net.Dial("unix", p); err == nil {
				c.Close()
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("%s never answered:\n%s", p, tail(log.String(), 40))
	}
	sociLog := start(soci, "--address", sociSock, "--config", filepath.Join(tmp, "soci.toml"), "--root", filepath.Join(tmp, "soci-root"))
	waitSocket(sociSock, sociLog)
	ctrdLog := start(filepath.Join(ctrd, "containerd"), "--config", filepath.Join(tmp, "config.toml"))
	waitSocket(ctrdSock, ctrdLog)

	ctr := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, filepath.Join(ctrd, "ctr"), append([]string{"--address", ctrdSock}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	plugins := ctr("plugins", "ls")
	soc := regexp.MustCompile(`(?m)^io\.containerd\.snapshotter\.v1\s+soci\s+\S+\s+(\S+)\s*$`).FindStringSubmatch(plugins)
	if soc == nil || soc[1] != "ok" {
		t.Fatalf("containerd's soci snapshotter plugin is not ok:\n%s", plugins)
	}
	t.Logf("ctr plugins ls: %s", strings.TrimSpace(soc[0]))
	if m := regexp.MustCompile(`(?m)^io\.containerd\.cri\.v1\s+images\s+.*$`).FindString(plugins); m != "" {
		t.Logf("ctr plugins ls: %s", m)
	}

	// An image imported into the snapshotter, as the cached pause image is at boot
	// (bootstrap.SOCIImportArgs): its layer is unpacked by the snapshotter.
	helloSrc := filepath.Join(tmp, "hello.go")
	sociMust(t, os.WriteFile(helloSrc, []byte("package main\n\nimport \"os\"\n\nfunc main() { os.Stdout.WriteString(\"hello from a soci snapshot\\n\") }\n"), 0o644))
	hb := exec.Command("go", "build", "-o", filepath.Join(tmp, "hello"), helloSrc)
	hb.Dir, hb.Env = tmp, append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if out, err := hb.CombinedOutput(); err != nil {
		t.Fatalf("go build hello: %v\n%s", err, out)
	}
	hello, err := os.ReadFile(filepath.Join(tmp, "hello"))
	sociMust(t, err)
	archive, diffID := sociArchive(t, hello)
	tarPath := filepath.Join(tmp, "image.tar")
	sociMust(t, os.WriteFile(tarPath, archive, 0o644))
	ctr(bootstrap.SOCIImportArgs(tarPath, 2)...)
	snaps := ctr("--namespace", "k8s.io", "snapshots", "--snapshotter", "soci", "ls")
	if !strings.Contains(snaps, diffID) || !strings.Contains(snaps, "Committed") {
		t.Fatalf("the image's layer %s is not a committed soci snapshot:\n%s", diffID, snaps)
	}
	t.Logf("ctr snapshots --snapshotter soci ls:\n%s", snaps)
	if _, err := os.Stat(filepath.Join(tmp, "soci-root", "snapshotter", "snapshots")); err != nil {
		t.Errorf("the snapshotter holds no snapshots under its root: %v", err)
	}

	// A container on the image, its root file system the soci snapshotter's
	// (runc from the e2e root: Debian's).
	root, err := baseRoot(t)
	sociMust(t, err)
	run := ctr("--namespace", "k8s.io", "run", "--rm", "--snapshotter", "soci", "--runc-binary", filepath.Join(root, "usr/sbin/runc"),
		"localhost/eksboot/soci-e2e:1", "soci-e2e", "/hello")
	if !strings.Contains(run, "hello from a soci snapshot") {
		t.Errorf("the container said %q", run)
	}
	t.Logf("ctr run --snapshotter soci: %s", strings.TrimSpace(run))

	verifyDropIn(t, files[dropInPath])
}

// renderedSOCISocket is the snapshotter's socket in eksboot's files.
const renderedSOCISocket = "/run/soci-snapshotter-grpc/soci-snapshotter-grpc.sock"

// relocate writes containerd's and the snapshotter's rendered configurations under
// tmp with only their node paths moved there (containerd's root, state and socket,
// the proxy plugin's socket, the base runtime spec; the snapshotter's image service
// and content store), after checking the rendered values, and returns containerd's
// and the snapshotter's sockets.
func relocate(t *testing.T, files map[string]string, tmp string) (ctrdSock, sociSock string) {
	t.Helper()
	const containerdPath, sociPath = "/etc/containerd/config.toml", "/etc/soci-snapshotter-grpc/config.toml"
	// containerd's configuration: the node paths under tmp, nothing else changed.
	var cfg map[string]any
	sociMust(t, toml.Unmarshal([]byte(files[containerdPath]), &cfg))
	proxy := cfg["proxy_plugins"].(map[string]any)["soci"].(map[string]any)
	if proxy["type"] != "snapshot" || proxy["address"] != renderedSOCISocket {
		t.Fatalf("proxy_plugins.soci = %v", proxy)
	}
	images := cfg["plugins"].(map[string]any)["io.containerd.cri.v1.images"].(map[string]any)
	if images["snapshotter"] != "soci" {
		t.Fatalf("the CRI snapshotter is %v", images["snapshotter"])
	}
	ctrdSock, sociSock = filepath.Join(tmp, "containerd.sock"), filepath.Join(tmp, "soci.sock")
	cfg["root"], cfg["state"] = filepath.Join(tmp, "containerd"), filepath.Join(tmp, "state")
	cfg["grpc"].(map[string]any)["address"] = ctrdSock
	delete(cfg, "imports")
	proxy["address"] = sociSock
	if runc, ok := cfg["plugins"].(map[string]any)["io.containerd.cri.v1.runtime"].(map[string]any)["containerd"].(map[string]any)["runtimes"].(map[string]any)["runc"].(map[string]any); ok {
		if spec, ok := runc["base_runtime_spec"].(string); ok {
			runc["base_runtime_spec"] = filepath.Join(tmp, filepath.Base(spec))
			sociMust(t, os.WriteFile(runc["base_runtime_spec"].(string), []byte(files[spec]), 0o644))
		}
	}
	ctrdConfig, err := toml.Marshal(cfg)
	sociMust(t, err)
	sociMust(t, os.WriteFile(filepath.Join(tmp, "config.toml"), ctrdConfig, 0o644))

	// The snapshotter's configuration: its image service's backend and content store
	// are containerd's socket.
	var sc map[string]any
	sociMust(t, toml.Unmarshal([]byte(files[sociPath]), &sc))
	keychain := sc["cri_keychain"].(map[string]any)
	if keychain["image_service_path"] != "/run/containerd/containerd.sock" {
		t.Fatalf("cri_keychain = %v", keychain)
	}
	keychain["image_service_path"] = ctrdSock
	sc["content_store"].(map[string]any)["containerd_address"] = ctrdSock
	sociConfig, err := toml.Marshal(sc)
	sociMust(t, err)
	sociMust(t, os.WriteFile(filepath.Join(tmp, "soci.toml"), sociConfig, 0o644))

	return ctrdSock, sociSock
}

// verifyDropIn runs systemd-analyze verify on containerd.service (a stand-in) with
// eksboot's drop-in and a soci-snapshotter.service like upstream's (Type=notify,
// Before=containerd.service), next to the machine's own units: the drop-in's
// Requires= and After= must name a unit that exists, and systemd must have nothing
// to say.
func verifyDropIn(t *testing.T, dropIn string) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Fatal("systemd-analyze is missing")
	}
	v := t.TempDir()
	lib := filepath.Join(v, "usr/lib/systemd/system")
	sociMust(t, os.MkdirAll(filepath.Join(lib, "containerd.service.d"), 0o755))
	// The machine's units: the targets the services order against.
	if out, err := exec.Command("cp", "-a", "/usr/lib/systemd/system/.", lib).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	sociMust(t, os.MkdirAll(filepath.Join(v, "usr/bin"), 0o755))
	for _, b := range []string{"containerd", "soci-snapshotter-grpc"} {
		sociMust(t, os.WriteFile(filepath.Join(v, "usr/bin", b), []byte("#!/bin/sh\n"), 0o755))
	}
	sociMust(t, os.WriteFile(filepath.Join(lib, "containerd.service"), []byte("[Unit]\nDescription=containerd\n\n[Service]\nExecStart=/usr/bin/containerd\n"), 0o644))
	sociMust(t, os.WriteFile(filepath.Join(lib, "soci-snapshotter.service"), []byte("[Unit]\nDescription=soci snapshotter\nBefore=containerd.service\n\n[Service]\nType=notify\nExecStart=/usr/bin/soci-snapshotter-grpc\n"), 0o644))
	sociMust(t, os.WriteFile(filepath.Join(lib, "containerd.service.d", "10-soci-snapshotter.conf"), []byte(dropIn), 0o644))
	out, err := exec.Command(analyze, "verify", "--man=no", "--root="+v, "containerd.service").CombinedOutput()
	if err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("systemd-analyze verify containerd.service with the drop-in: %v\n%s", err, out)
	}
	// Without the snapshotter's unit the drop-in is what breaks containerd: the check
	// can fail.
	sociMust(t, os.Remove(filepath.Join(lib, "soci-snapshotter.service")))
	if out, err := exec.Command(analyze, "verify", "--man=no", "--root="+v, "containerd.service").CombinedOutput(); err == nil && !bytes.Contains(out, []byte("soci-snapshotter.service")) {
		t.Errorf("systemd-analyze verify says nothing of a missing soci-snapshotter.service:\n%s", out)
	}
}

// sociArchive is a one-layer OCI image archive (the program hello as /hello) and its
// layer's diff ID.
func sociArchive(t *testing.T, hello []byte) ([]byte, string) {
	t.Helper()
	var layer bytes.Buffer
	tw := tar.NewWriter(&layer)
	sociMust(t, tw.WriteHeader(&tar.Header{Name: "hello", Mode: 0o755, Size: int64(len(hello)), Typeflag: tar.TypeReg}))
	_, err := tw.Write(hello)
	sociMust(t, err)
	sociMust(t, tw.Close())
	diff := sha256.Sum256(layer.Bytes())
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err = zw.Write(layer.Bytes())
	sociMust(t, err)
	sociMust(t, zw.Close())
	blob := func(b []byte) (string, []byte) { s := sha256.Sum256(b); return "sha256:" + hex.EncodeToString(s[:]), b }
	layerDigest, layerBlob := blob(gz.Bytes())
	diffID := "sha256:" + hex.EncodeToString(diff[:])
	config, err := json.Marshal(map[string]any{
		"architecture": "amd64", "os": "linux",
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{diffID}}, "config": map[string]any{},
	})
	sociMust(t, err)
	configDigest, configBlob := blob(config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": map[string]any{"mediaType": "application/vnd.oci.image.config.v1+json", "digest": configDigest, "size": len(configBlob)},
		"layers": []any{map[string]any{"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip", "digest": layerDigest, "size": len(layerBlob)}},
	})
	sociMust(t, err)
	manifestDigest, manifestBlob := blob(manifest)
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json",
		"manifests": []any{map[string]any{
			"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": manifestDigest, "size": len(manifestBlob),
			"annotations": map[string]string{"io.containerd.image.name": "localhost/eksboot/soci-e2e:1", "org.opencontainers.image.ref.name": "1"},
			"platform":    map[string]string{"architecture": "amd64", "os": "linux"},
		}},
	})
	sociMust(t, err)
	var out bytes.Buffer
	aw := tar.NewWriter(&out)
	add := func(name string, b []byte) {
		sociMust(t, aw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}))
		_, err := aw.Write(b)
		sociMust(t, err)
	}
	add("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`))
	add("index.json", index)
	for _, b := range [][2]any{{layerDigest, layerBlob}, {configDigest, configBlob}, {manifestDigest, manifestBlob}} {
		add("blobs/sha256/"+strings.TrimPrefix(b[0].(string), "sha256:"), b[1].([]byte))
	}
	sociMust(t, aw.Close())
	return out.Bytes(), diffID
}
