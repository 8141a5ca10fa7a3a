package bootstrap

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/containerdconf"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodefile"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/systemd"
)

// Action is one systemd operation: daemon-reload, enable, start or restart of a unit
// ("start --no-block": queued, not waited for), or "signal" (SIGHUP) to make a
// daemon re-read its configuration; or "ctr", which
// runs containerd's ctr with the arguments of Unit (words without spaces: the import
// of a cached image into the SOCI snapshotter, SOCIImportArgs).
type Action struct {
	Verb string
	Unit string
}

func (a Action) String() string { return strings.TrimSpace(a.Verb + " " + a.Unit) }

// Actions works out the systemd operations that the file changes call for, from the
// units that each changed file names (n.Owned: what the renderers returned), in
// order: a daemon-reload when a file systemd reads changed; sys-fs-bpf.mount
// enabled and started when installed; systemd-resolved restarted (before anything
// resolves names); the SOCI snapshotter restarted, then containerd (and
// sandbox-image) enabled and restarted; systemd-logind signalled; kubelet enabled,
// then restarted when anything it reads changed or containerd restarted (its CRI
// connection), else only started (a no-op when it is already running). It is pure.
func Actions(n *Node, changes []rootfs.Change) []Action {
	owned := make(map[string]nodefile.File, len(n.Owned))
	for _, f := range n.Owned {
		owned[f.Path] = f
	}
	units := map[string]bool{}
	reload := false
	for _, c := range changes {
		f := owned[c.Path]
		reload = reload || f.Reload
		for _, u := range f.Units {
			units[u] = true
		}
	}
	var acts []Action
	if reload {
		acts = append(acts, Action{Verb: "daemon-reload"})
	}
	if units[nodesys.BPFMountUnit] {
		acts = append(acts, Action{"enable", nodesys.BPFMountUnit}, Action{"start", nodesys.BPFMountUnit})
	}
	if units[nodesys.ResolvedUnit] {
		acts = append(acts, Action{"restart", nodesys.ResolvedUnit}) // before anything resolves names
	}
	if units[containerdconf.SOCIUnit] {
		// containerd's restart starts it (Requires=), but does not restart it.
		acts = append(acts, Action{"restart", containerdconf.SOCIUnit})
	}
	containerd := units[containerdconf.Unit]
	if containerd {
		acts = append(acts, Action{"enable", containerdconf.Unit})
		if n.SandboxImageUnit {
			acts = append(acts, Action{"enable", containerdconf.SandboxImageUnit})
		}
		acts = append(acts, Action{"restart", containerdconf.Unit})
		if n.SandboxImageUnit {
			acts = append(acts, Action{"restart", containerdconf.SandboxImageUnit})
		}
		if n.SOCIPauseTar != "" {
			acts = append(acts, Action{"ctr", strings.Join(SOCIImportArgs(n.SOCIPauseTar, n.ContainerdMajor), " ")})
		}
	}
	if units[nodesys.LogindUnit] {
		acts = append(acts, Action{"signal", nodesys.LogindUnit})
	}
	acts = append(acts, Action{"enable", kubeletconf.Unit})
	if containerd || units[kubeletconf.Unit] {
		acts = append(acts, Action{"restart", kubeletconf.Unit})
	} else {
		acts = append(acts, Action{"start", kubeletconf.Unit})
	}
	return acts
}

// SOCIImportArgs are ctr's arguments that import the image archive tar (a node
// path) into the SOCI snapshotter, in the CRI's namespace: the content into
// containerd's store, the layers unpacked by the snapshotter. containerd 2's ctr
// imports through the transfer service by default, which unpacks only for the
// snapshotters of its unpack_config ("no unpack platforms defined" for soci), so
// there the import is --local, as containerd 1's always is.
func SOCIImportArgs(tar string, containerdMajor int) []string {
	args := []string{"--namespace", "k8s.io", "images", "import", "--snapshotter", "soci"}
	if containerdMajor >= 2 {
		args = append(args, "--local")
	}
	return append(args, tar)
}

// settlePoll is how often stayActive looks at the unit.
const settlePoll = 200 * time.Millisecond

// stayActive checks that unit stays active for settle.
func stayActive(ctx context.Context, m systemd.Manager, unit string, settle time.Duration) error {
	deadline := time.Now().Add(settle)
	for {
		state, err := m.ActiveState(ctx, unit)
		if err != nil {
			return fmt.Errorf("after the job: %w", err)
		}
		if state != "active" {
			return fmt.Errorf("%s did not stay running: it is %s within %v of its start (journalctl -u %s says why)", unit, state, settle, unit)
		}
		if !time.Now().Before(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(settlePoll, time.Until(deadline))):
		}
	}
}

// apply carries out the actions in order, stopping at the first failure. A logind
// that cannot be signalled is only a warning: the kubelet asks logind to reload its
// configuration itself when it starts.
//
// A kubelet that was started or restarted must then stay active for settle: the
// kubelet unit is Type=simple, so its start job is done as soon as the process runs,
// and a kubelet that exits at once (an unknown flag, a bad config) would otherwise
// leave a run that succeeded and a unit restarting forever.
func apply(ctx context.Context, m systemd.Manager, acts []Action, settle time.Duration, log *zap.Logger, command func(ctx context.Context, name string, args ...string) error) error {
	for _, a := range acts {
		var err error
		switch a.Verb {
		case "ctr":
			err = command(ctx, "ctr", strings.Fields(a.Unit)...)
		case "signal":
			if err := m.Signal(ctx, a.Unit, syscall.SIGHUP); err != nil {
				log.Warn("could not make systemd-logind re-read its configuration; the kubelet will ask it again", zap.Error(err))
			}
			continue
		case "daemon-reload":
			err = m.Reload(ctx)
		case "enable":
			err = m.Enable(ctx, a.Unit)
		case "start":
			err = m.Start(ctx, a.Unit)
		case "start --no-block":
			err = m.StartNoBlock(ctx, a.Unit)
		case "restart":
			err = m.Restart(ctx, a.Unit)
		default:
			err = fmt.Errorf("unknown systemd action %q", a.Verb)
		}
		if err == nil && a.Unit == "kubelet.service" && (a.Verb == "start" || a.Verb == "restart") {
			err = stayActive(ctx, m, a.Unit, settle)
		}
		if err != nil {
			return fmt.Errorf("systemd %s: %w", a, err)
		}
	}
	return nil
}
