package bootstrap

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodefile"
)

// KubeletBasePath is eksboot's record of what kubelet-config.json is made from: the
// base its edits apply to and the digests of the files it wrote from it
// (docs/compat.md, "kubelet-config.json is edited in place"). It lies beside the
// file, so that whatever carries one (an image built from a node) carries both.
const KubeletBasePath = kubeletconf.ConfigPath + ".base"

// kubeletBaseKeep is how many of the files eksboot wrote the record knows: the last
// two, so that a run killed between the record's rename and kubelet-config.json's
// (the record is renamed first) still finds the old file eksboot's.
const kubeletBaseKeep = 2

// KubeletBase is what kubelet-config.json is made from, as bootstrap.sh made it: the
// file on the node, with bootstrap.sh's edits applied over it. The node's file is
// the base the first time eksboot meets it (the image's, as the image and the user
// data before bootstrap.sh left it), and whenever it is not a file eksboot wrote
// (someone edited it since, as they could edit it between two runs of
// bootstrap.sh); a file eksboot wrote is never a base: the base kept beside it
// (KubeletBasePath) is, so that a run with other inputs gives the file a first
// boot with those inputs would, and a run with the same inputs writes nothing.
type KubeletBase struct {
	// Config is the base; empty when it is eksboot's template (the node had no
	// kubelet-config.json: a bare root, an AL2023 image).
	Config kubeletconf.CheckedOverlay
	// From says where the base came from, for the log and errors.
	From string
	// written are the digests of the files made from this base, newest first.
	written []string
}

// kubeletBaseRecord is KubeletBasePath's JSON.
type kubeletBaseRecord struct {
	Comment string `json:"comment"`
	// Base is the kubelet-config.json eksboot's edits apply to; absent: eksboot's
	// template.
	Base json.RawMessage `json:"base,omitempty"`
	// Written are the sha256 digests of the kubelet-config.json files eksboot
	// wrote from Base, newest first.
	Written []string `json:"written"`
}

const kubeletBaseComment = "eksboot: kubelet-config.json is this base with eksboot's edits applied; a kubelet-config.json whose sha256 is not in written is the new base"

// readKubeletBase finds kubelet-config.json's base among the node's file and the
// record. A record that cannot be read is left aside with a warning (the node's
// file is then the base); a node's file that is the base and not a kubelet
// configuration the kubelet takes is an error naming it.
func readKubeletBase(files NodeFiles, warn func(string)) (KubeletBase, error) {
	rec, err := readKubeletBaseRecord(files)
	if err != nil {
		warn(fmt.Sprintf("%s: %v: taking %s as it is as the base of bootstrap.sh's edits", KubeletBasePath, err, kubeletconf.ConfigPath))
		rec = nil
	}
	disk, err := optional(files.ReadFile(kubeletconf.ConfigPath))
	if err != nil {
		return KubeletBase{}, err
	}
	if disk != nil && (rec == nil || !slices.Contains(rec.Written, digest(disk))) {
		o, err := kubeletconf.CheckConfigFile(disk)
		if err != nil {
			return KubeletBase{}, fmt.Errorf("%s (the node's file, which bootstrap.sh edits in place): %w", kubeletconf.ConfigPath, err)
		}
		if kubeletconf.IsTemplate(o) { // the AL2 image's, untouched: nothing of the user's in it
			return KubeletBase{From: "the node's " + kubeletconf.ConfigPath + ", the AMI's template"}, nil
		}
		return KubeletBase{Config: o, From: "the node's " + kubeletconf.ConfigPath}, nil
	}
	if rec == nil {
		return KubeletBase{From: "eksboot's template (the node has no " + kubeletconf.ConfigPath + ")"}, nil
	}
	b := KubeletBase{From: "eksboot's template (kept in " + KubeletBasePath + ")", written: rec.Written}
	if len(rec.Base) > 0 {
		if b.Config, err = kubeletconf.CheckConfigFile(rec.Base); err != nil {
			return KubeletBase{}, fmt.Errorf("%s: base: %w", KubeletBasePath, err)
		}
		b.From = "the node's first " + kubeletconf.ConfigPath + " (kept in " + KubeletBasePath + ")"
	}
	return b, nil
}

// readKubeletBaseRecord reads KubeletBasePath; nil when there is none.
func readKubeletBaseRecord(files NodeFiles) (*kubeletBaseRecord, error) {
	b, err := optional(files.ReadFile(KubeletBasePath))
	if err != nil || b == nil {
		return nil, err
	}
	if err := inputcheck.CheckJSONDepth(b); err != nil {
		return nil, err
	}
	var rec kubeletBaseRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// record is KubeletBasePath for the kubelet-config.json made from b: the base and
// the digest of made before the ones already recorded, at most kubeletBaseKeep.
// Equal bases and files give equal bytes, so a run with the same inputs rewrites
// neither.
func (b KubeletBase) record(made []byte) (nodefile.File, error) {
	rec := kubeletBaseRecord{Comment: kubeletBaseComment, Written: []string{digest(made)}}
	for _, d := range b.written {
		if len(rec.Written) < kubeletBaseKeep && !slices.Contains(rec.Written, d) {
			rec.Written = append(rec.Written, d)
		}
	}
	if b.Config.Len() > 0 {
		base, err := json.Marshal(b.Config)
		if err != nil {
			return nodefile.File{}, err
		}
		rec.Base = base
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nodefile.File{}, err
	}
	// No unit reads it: eksboot's own, as the cluster cache.
	return nodefile.File{Path: KubeletBasePath, Data: append(data, '\n'), Mode: nodefile.Mode, From: kubeletconf.ConfigPath}, nil
}

// Limits of the kubelet's drop-in directory as eksboot reads it: a directory of an
// image holds a few files.
const (
	maxKubeletDropIns     = 256
	maxKubeletDropInDepth = 8
)

// readKubeletDropIns reads the drop-ins of the kubelet's configuration directory
// that are not eksboot's (kubeletconf.NodeConfigDropInPath is).
func readKubeletDropIns(files NodeFiles) ([]kubeletconf.DropIn, error) {
	all, err := ReadKubeletDropIns(files)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(d kubeletconf.DropIn) bool { return d.Path == kubeletconf.NodeConfigDropInPath }), nil
}

// ReadKubeletDropIns reads the drop-ins of the kubelet's configuration directory
// (kubeletconf.ConfigDropInDir) as the kubelet walks it: in name order, into
// subdirectories, only *.conf files (the kubelet skips the others). Each must be a
// configuration the kubelet takes (it exits on one it cannot load), checked as
// spec.kubelet.config is. `eksboot doctor` reads them too.
func ReadKubeletDropIns(files NodeFiles) ([]kubeletconf.DropIn, error) {
	var out []kubeletconf.DropIn
	var walk func(dir string, depth int) error
	walk = func(dir string, depth int) error {
		names, err := files.ReadDir(dir)
		if err != nil {
			if depth == 0 && errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("%s: %w", dir, err)
		}
		for _, n := range names {
			p := path.Join(dir, n)
			st, err := files.Stat(p)
			if err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			if st.IsDir() {
				if depth+1 >= maxKubeletDropInDepth {
					return fmt.Errorf("%s: more than %d levels of folders in the kubelet's drop-in directory", p, maxKubeletDropInDepth)
				}
				if err := walk(p, depth+1); err != nil {
					return err
				}
				continue
			}
			if path.Ext(n) != kubeletconf.ConfigDropInExt {
				continue
			}
			if len(out) == maxKubeletDropIns {
				return fmt.Errorf("%s: more than %d drop-ins", kubeletconf.ConfigDropInDir, maxKubeletDropIns)
			}
			b, err := files.ReadFile(p)
			if err != nil {
				return err
			}
			o, err := kubeletconf.CheckConfigFile(b)
			if err != nil {
				return fmt.Errorf("%s (a drop-in the kubelet reads): %w", p, err)
			}
			out = append(out, kubeletconf.DropIn{Path: p, Config: o})
		}
		return nil
	}
	if err := walk(kubeletconf.ConfigDropInDir, 0); err != nil {
		return nil, err
	}
	return out, nil
}
