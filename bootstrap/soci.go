package bootstrap

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/maxpods"
)

// FastImagePull (spec.featureGates.FastImagePull), as nodeadm does it: on an
// instance with at least 4 vCPUs and 7 GiB, images are pulled by the SOCI snapshotter
// in parallel pull/unpack mode. eksboot then writes
//
//   - containerd's CRI snapshotter "soci" and the proxy plugin soci on the
//     snapshotter's socket (containerdconf.FastImagePullOverlay);
//   - the kubelet's imageServiceEndpoint on that socket, so the snapshotter's CRI
//     keychain sees the kubelet's registry credentials;
//   - the snapshotter's configuration (containerdconf.SOCIConfig);
//   - the containerd.service drop-in that requires and follows soci-snapshotter.service;
//
// and, after containerd's restart, imports the image's cached pause image
// (/etc/eks/pause.tar on AL2023) into the SOCI snapshotter: a pod's sandbox is
// unpacked by the CRI snapshotter, and the cached image was unpacked by overlayfs
// when the image was built; without the import the first pod would pull it from a
// registry that needs credentials the sandbox pull does not have.

// pathPauseTar is the pause image the AL2023 image caches at build time.
const pathPauseTar = "/etc/eks/pause.tar"

// The SOCI snapshotter's thresholds (nodeadm's UseSOCISnapshotter).
const (
	sociMinCPUs   = 4
	sociMinMemory = 7 << 30
)

// sociUnitPaths are where an image ships soci-snapshotter.service.
var sociUnitPaths = []string{"/usr/lib/systemd/system/" + containerdconf.SOCIUnit, "/etc/systemd/system/" + containerdconf.SOCIUnit}

// decideSOCI sets f.SOCI for a run whose FastImagePull gate is on: the instance's
// vCPUs and memory are the instance type's (the embedded table), else the node's own
// (its CPUs and /proc/meminfo's MemTotal); below the threshold, or on a node without
// the snapshotter's unit, the default snapshotter stays, with a warning (nodeadm
// says nothing). It also finds the image's parallel gzip and cached pause image.
func decideSOCI(c *Config, env *Env, f *Facts) {
	if !c.FastImagePull {
		return
	}
	cpus, mem, from := f.CPUs, int64(0), "the node"
	if t, ok := maxpods.Info(f.Instance.InstanceType); ok && t.VCPUs > 0 && t.MemoryMiB > 0 {
		cpus, mem, from = t.VCPUs, t.MemoryMiB<<20, f.Instance.InstanceType+" (the instance table)"
	} else if env.MemoryBytes != nil {
		mem, _ = env.MemoryBytes() // unknown memory (0) is below the threshold
	}
	if !kubeletconf.FastImagePullEffective(true, int64(cpus)*1000, mem) {
		f.Warnings = append(f.Warnings, fmt.Sprintf("spec.featureGates.FastImagePull: %s: %d vCPUs and %s of memory, below the SOCI snapshotter's %d vCPUs and %d GiB: images are pulled by containerd's default snapshotter",
			from, cpus, gib(mem), sociMinCPUs, sociMinMemory>>30))
		return
	}
	if env.OnNode() && !exists(env, sociUnitPaths...) {
		f.Warnings = append(f.Warnings, "spec.featureGates.FastImagePull: the image has no "+containerdconf.SOCIUnit+": images are pulled by containerd's default snapshotter")
		return
	}
	f.SOCI = true
	if exists(env, containerdconf.SOCIGzipHelper) {
		f.SOCIGzip = containerdconf.SOCIGzipHelper
	}
	if exists(env, pathPauseTar) {
		f.PauseTar = pathPauseTar
	}
}

// exists reports whether any of the node paths is a regular file.
func exists(env *Env, paths ...string) bool {
	for _, p := range paths {
		if st, err := env.Files.Stat(p); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// gib formats bytes in GiB with one decimal.
func gib(b int64) string { return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB" }

// maxMeminfo bounds the read of /proc/meminfo.
const maxMeminfo = 64 << 10

// memoryBytes is the node's memory: /proc/meminfo's MemTotal (the kernel's, a little
// less than the instance type's).
func memoryBytes() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMeminfo))
	if err != nil {
		return 0, err
	}
	return parseMeminfo(b)
}

// parseMeminfo reads MemTotal from /proc/meminfo's text.
func parseMeminfo(b []byte) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != "MemTotal" {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			break
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil || kb <= 0 || kb > 1<<44 {
			break
		}
		return kb << 10, nil
	}
	return 0, errors.New("/proc/meminfo: no MemTotal in kB")
}
