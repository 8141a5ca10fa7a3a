package doctor

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/rootfs"
)

const eksbootGroup = "eksboot"

// maxFileRead bounds each of eksboot's files read back (as rootfs does).
const maxFileRead = rootfs.DefaultReadLimit

// checkKubeletStart reports when `eksboot init` had the kubelet start and why, as
// its run recorded it, with when the kubelet and cloud-final last became active
// (systemd's timestamps; the kubelet's is its last start). It is information: the
// kubelet's own state is runtime.kubelet's.
func (d *run) checkKubeletStart(recorded string) {
	ev := "the kubelet starts " + clip(recorded, 400)
	at := map[string]time.Time{}
	for _, unit := range []string{"kubelet.service", "cloud-final.service"} {
		ctx, cancel := d.checkCtx()
		u, err := d.env.Units.Unit(ctx, unit)
		cancel()
		if err == nil && !u.ActiveEnter.IsZero() {
			at[unit] = u.ActiveEnter
		}
	}
	if k, f := at["kubelet.service"], at["cloud-final.service"]; !k.IsZero() && !f.IsZero() {
		rel := "after"
		if k.Before(f) {
			rel = "before"
		}
		ev += fmt.Sprintf("; this boot: the kubelet active since %s, %.1fs %s cloud-final ended (%s)",
			k.UTC().Format(time.RFC3339), k.Sub(f).Abs().Seconds(), rel, f.UTC().Format(time.RFC3339))
	}
	d.add(eksbootGroup, "eksboot.kubelet-start", OK, ev, "")
}

// checkStatus: the last run's record, and whether the files still equal it.
func (d *run) checkStatus() {
	s, err := bootstrap.ReadStatus(d.env.Files)
	switch {
	case errors.Is(err, bootstrap.ErrNoStatus):
		d.add(eksbootGroup, "eksboot.last-run", Warn, "no record of an eksboot run: "+err.Error(),
			"Bootstrap the node with eksboot (bootstrap.sh or eksboot init), or look for what else configured it.")
		return
	case err != nil:
		d.add(eksbootGroup, "eksboot.last-run", Fail, "the status of the last run is unreadable: "+err.Error(),
			"Run eksboot again; it rewrites "+bootstrap.StatusPath+".")
		return
	}
	ago := d.env.now().Sub(s.Finished).Round(time.Second)
	what := fmt.Sprintf("eksboot %s, phase %s, %s ago (%s), cluster %s, %d files", s.Version, s.Phase, ago,
		s.Finished.Format(time.RFC3339), d.quote(s.Inputs.ClusterName), len(s.Files))
	if s.Outcome != "ok" {
		d.add(eksbootGroup, "eksboot.last-run", Fail, what+": failed: "+s.Error,
			"Fix what the error says, then run eksboot again (systemctl restart eksboot-run, or the bootstrap.sh command line of the user data).")
	} else {
		d.add(eksbootGroup, "eksboot.last-run", OK, what+": ok", "")
	}
	if s.KubeletStart != "" {
		d.checkKubeletStart(s.KubeletStart)
	}
	if len(s.Files) == 0 {
		return
	}
	var changed, missing, back []string
	var detail strings.Builder
	for _, f := range s.Files {
		b, err := d.env.Files.ReadFileLimit(f.Path, maxFileRead)
		if errors.Is(err, fs.ErrNotExist) {
			missing = append(missing, f.Path)
			continue
		}
		if err != nil {
			missing = append(missing, f.Path+" ("+err.Error()+")")
			continue
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) == f.SHA256 {
			continue
		}
		changed = append(changed, f.Path)
		if f.Content != "" {
			// The keys that name secrets are redacted in both, so that a token, key or
			// CA added by hand never shows (the status keeps no secret itself).
			detail.WriteString(rootfs.Change{Path: f.Path, Old: []byte(d.redactFile(f.Content)), New: []byte(d.redactFile(string(b)))}.Diff())
		} else {
			fmt.Fprintf(&detail, "%s: sha256 %.12s… when written, %.12s… now (eksboot keeps only the digest of this file)\n", f.Path, f.SHA256, hex.EncodeToString(sum[:]))
		}
	}
	for _, p := range s.Removed {
		if _, err := d.env.Files.Stat(p); err == nil {
			back = append(back, p)
		}
	}
	switch {
	case len(missing) > 0:
		r := d.add(eksbootGroup, "eksboot.files", Fail, fmt.Sprintf("%d of the %d files eksboot wrote are gone: %s", len(missing), len(s.Files), strings.Join(missing, ", ")),
			"Run eksboot again to write them (systemctl restart eksboot-run, or the bootstrap.sh command line of the user data).")
		r.Detail = detail.String()
	case len(changed) > 0:
		fix := "Someone edited them by hand: put the change in the user data (a NodeConfig or --kubelet-extra-args) and run eksboot again, or the next boot undoes it."
		if slices.Contains(changed, KubeletConfigPath) {
			fix = "Someone edited them by hand: put the change in the user data (a NodeConfig or --kubelet-extra-args) and run eksboot again; the next boot undoes it, but in " +
				KubeletConfigPath + ", which eksboot's edits apply to as bootstrap.sh's did, it keeps what eksboot does not set."
		}
		r := d.add(eksbootGroup, "eksboot.files", Warn, fmt.Sprintf("changed since eksboot wrote them: %s", strings.Join(changed, ", ")), fix)
		r.Detail = detail.String()
	case len(back) > 0:
		d.add(eksbootGroup, "eksboot.files", Warn, "files eksboot removed are back: "+strings.Join(back, ", "),
			"Remove them, or run eksboot again.")
	default:
		d.add(eksbootGroup, "eksboot.files", OK, fmt.Sprintf("all %d files as eksboot wrote them (sha256)", len(s.Files)), "")
	}
}
