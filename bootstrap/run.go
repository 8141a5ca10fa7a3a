package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodesys"
	"github.com/eksboot/eksboot/rootfs"
)

// Run joins the node to the cluster of the configuration c (from either front end,
// Validate, of cli/flags.Parse's Options, or FromNodeConfig): instance facts, the computed node (ComputeNode), the
// diff against the node's files, the writes, the restarts. Nothing is written until
// everything has been computed and checked, so bad input or missing facts leave the
// node untouched.
func Run(ctx context.Context, c *Config, env *Env) (err error) {
	start := time.Now()
	log := env.Log
	for _, w := range c.Warnings {
		log.Warn(w)
	}
	if env.Root.Dir() == "/" && !c.DryRun && env.Geteuid() != 0 {
		return errors.New("eksboot bootstrap must run as root to configure this node (use --dry-run to see what it would do)")
	}
	if !c.DryRun {
		// One run at a time changes the node (cloud-init's bootstrap.sh and the
		// run-phase unit, a rerun by hand), from the facts to the last restart; the
		// lock writes nothing. The wait covers another run's systemd jobs
		// (--systemd-timeout) and its writes.
		unlock, err := step(env, "lock", func() (func(), error) { return env.Root.Lock(ctx, c.SystemdTimeout+2*time.Minute) })
		if err != nil {
			return err
		}
		defer unlock()
	}
	// /var/lib/eksboot/status.json, for eksboot doctor: recorded under the lock (this
	// deferred call runs before the unlock), so a run that waited for the lock in vain
	// leaves the holder's record alone.
	var f *Facts
	var n *Node
	defer func() { recordStatus(env, c, f, n, start, err) }()
	f, n, err = ComputeNode(ctx, c, env)
	if err != nil {
		return err
	}
	changes, err := step(env, "diff", func() ([]rootfs.Change, error) { return env.Root.Plan(n.Files, n.Remove) })
	if err != nil {
		return err
	}
	acts := Actions(n, changes)
	if c.ReloadOnly {
		acts = slices.DeleteFunc(acts, func(a Action) bool { return a.Verb != "daemon-reload" })
		if c.KubeletStart.Early {
			// The kubelet (and containerd, Requires=) is ordered after this phase:
			// its start runs once the phase has ended, on the files just written.
			acts = append(acts, Action{Verb: "start --no-block", Unit: kubeletconf.Unit})
		}
	}
	if c.DryRun {
		printDryRun(env.Stdout, changes, acts, c.NoRestart)
		return nil
	}
	o := c.Settings

	if err := localDisks(ctx, c, env); err != nil {
		return err
	}
	if _, err := step(env, "write", func() (int, error) { return len(changes), write(env, n, changes) }); err != nil {
		return err
	}
	if err := gpuHook(ctx, env); err != nil {
		return err
	}
	if o.NoRestart {
		log.Info("systemd left alone (--no-restart)", zap.Stringers("skipped", acts))
		return nil
	}
	if len(acts) == 0 {
		log.Info("nothing for systemd to do")
		return nil
	}
	_, err = step(env, "restart", func() (int, error) {
		sctx, cancel := context.WithTimeout(ctx, o.SystemdTimeout)
		defer cancel()
		m, err := env.Systemd(sctx)
		if err != nil {
			return 0, fmt.Errorf("connect to systemd: %w", err)
		}
		defer m.Close()
		return len(acts), apply(sctx, m, acts, env.KubeletSettle, log, env.Command)
	})
	return err
}

// ComputeNode gathers the instance facts for c and computes the whole node from them
// (Compute, pure): every file with its content, the kubelet flags and the units. It
// writes nothing; Run applies the node, `eksboot render` prints it.
func ComputeNode(ctx context.Context, c *Config, env *Env) (*Facts, *Node, error) {
	log := env.Log
	f, err := step(env, "instance facts", func() (*Facts, error) { return gatherFacts(ctx, c, env) })
	if err != nil {
		return nil, nil, err
	}
	for _, w := range f.Warnings {
		log.Warn(w)
	}
	logFacts(log, f)
	n, err := step(env, "compute", func() (*Node, error) { return Compute(c, f) })
	if err != nil {
		return f, nil, err
	}
	for _, w := range n.Warnings {
		log.Warn(w)
	}
	log.Info("node", zap.String("nodeIP", n.NodeIP), zap.Strings("clusterDNS", n.ClusterDNS),
		zap.Int("maxPods", n.MaxPods), zap.Bool("maxPodsInConfig", c.UseMaxPods), zap.String("pauseImage", n.PauseImage))
	return f, n, nil
}

// step runs one step of the checklist, logs its outcome and duration and tells
// env.OnStep.
func step[T any](env *Env, name string, fn func() (T, error)) (T, error) {
	log := env.Log
	log.Debug("step started", zap.String("step", name))
	if env.OnStep != nil { // a stopped run names the step it was in
		env.OnStep(StepEvent{Step: name})
	}
	start := time.Now()
	v, err := fn()
	d := zap.Duration("took", time.Since(start).Round(time.Microsecond))
	if env.OnStep != nil {
		env.OnStep(StepEvent{Step: name, Ended: true, Err: err})
	}
	if err != nil {
		var ue *UsageError
		if !errors.As(err, &ue) { // usage errors are reported once, by the caller
			log.Error("step failed", zap.String("step", name), d, zap.Error(err))
		}
		return v, err
	}
	log.Info("step done", zap.String("step", name), d)
	return v, nil
}

// write creates the directories and applies the file changes, logging each file.
// The directories (n.Dirs and those of the files) are created first, all at once: a
// directory that cannot be made stops the run before any file is written, and the
// creations, slow on some file systems, do not wait for one another.
func write(env *Env, n *Node, changes []rootfs.Change) error {
	dirs := slices.Clone(n.Dirs)
	for _, c := range changes {
		if !c.Remove {
			dirs = append(dirs, path.Dir(c.Path))
		}
	}
	slices.Sort(dirs)
	dirs = slices.Compact(dirs)
	errs := make([]error, len(dirs))
	var wg sync.WaitGroup
	for i, d := range dirs {
		wg.Go(func() { errs[i] = env.Root.MkdirAll(d) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if err := env.Root.Apply(changes); err != nil {
		return err
	}
	for _, c := range changes {
		verb := "wrote"
		if c.Remove {
			verb = "removed"
		}
		env.Log.Info(verb, zap.String("path", c.Path), zap.Int("bytes", len(c.New)))
	}
	if len(changes) == 0 {
		env.Log.Info("every file already up to date")
	}
	return nil
}

// printDryRun prints each change as a unified diff and the systemd actions.
func printDryRun(w io.Writer, changes []rootfs.Change, acts []Action, noRestart bool) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "# every file is up to date")
	}
	for _, c := range changes {
		fmt.Fprint(w, c.Diff())
	}
	if noRestart {
		fmt.Fprintln(w, "# systemd: nothing (--no-restart)")
		return
	}
	for _, a := range acts {
		fmt.Fprintf(w, "# systemd: %s\n", a)
	}
}

// localDisks runs the node image's setup-local-disks helper for --local-disks, as
// bootstrap.sh does. It only makes sense on the node itself (--root /).
func localDisks(ctx context.Context, c *Config, env *Env) error {
	if c.LocalDisksArgs == nil {
		return nil
	}
	if !env.OnNode() {
		env.Log.Warn("local disks skipped: instance-store disks are set up only on the node itself (--root /)", zap.Strings("args", c.LocalDisksArgs))
		return nil
	}
	if err := env.Command(ctx, nodesys.LocalDisksHelper, c.LocalDisksArgs...); err != nil {
		return fmt.Errorf("local disks: %s %s: %w", nodesys.LocalDisksHelper, strings.Join(c.LocalDisksArgs, " "), err)
	}
	return nil
}

// gpuHook runs the GPU AMI's /etc/eks/bootstrap-gpu.sh when it is there and
// executable, as bootstrap.sh does (only on the node itself).
func gpuHook(ctx context.Context, env *Env) error {
	const hook = "/etc/eks/bootstrap-gpu.sh"
	if env.Root.Dir() != "/" {
		return nil
	}
	st, err := os.Stat(hook)
	if err != nil || st.Mode()&0o111 == 0 {
		return nil
	}
	env.Log.Info("running the GPU bootstrap helper", zap.String("path", hook))
	if err := env.Command(ctx, hook, "-r", "containerd"); err != nil {
		return fmt.Errorf("%s: %w", hook, err)
	}
	return nil
}
