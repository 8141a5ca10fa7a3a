package bootstrap

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/userdata"
)

// The NodeConfig drop-in folders, merged after the user data's NodeConfigs in this
// order, in both phases of `eksboot init`:
//   - NodeadmDropInDir, nodeadm's (nodeadm-run.service's second config source,
//     file:///etc/eks/nodeadm.d/), read as nodeadm's file config provider reads it:
//     the files whose names end in .yaml, .yml or .json (in any case), in name
//     order, each one NodeConfig or a MIME multipart document of NodeConfig parts;
//   - EksbootDropInDir, eksboot's own: *.yaml and *.yml in name order.
//
// eksboot's own folder comes last, so it wins a field both set: an image moving from
// nodeadm keeps its nodeadm.d as it was, and what it adds for eksboot is meant to
// apply over it.
const (
	NodeadmDropInDir = "/etc/eks/nodeadm.d"
	EksbootDropInDir = "/etc/eks/eksboot.d"
)

// maxDropIns bounds the files read from one drop-in folder.
const maxDropIns = 256

// limitedFiles are NodeFiles that read through a limit of the caller's
// (*rootfs.Root is one).
type limitedFiles interface {
	ReadFileLimit(p string, max int64) ([]byte, error)
}

// ReadNodeConfigDropIns reads the NodeConfig drop-ins of the node's files, nodeadm's
// folder's then eksboot's, each file at most userdata.MaxUserData bytes, as user
// data is. A missing folder has none. `eksboot init` reads the node's, `eksboot
// render` its simulated node's (the image's and what the user data wrote).
func ReadNodeConfigDropIns(files NodeFiles) ([]nodeconfig.Source, error) {
	nodeadm, err := readDropInDir(files, NodeadmDropInDir, isNodeadmConfigFile, true)
	if err != nil {
		return nil, err
	}
	own, err := readDropInDir(files, EksbootDropInDir, func(n string) bool {
		return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")
	}, false)
	if err != nil {
		return nil, err
	}
	return append(nodeadm, own...), nil
}

// isNodeadmConfigFile is nodeadm's test of a file in its folder: its name ends in
// .yaml, .yml or .json, in any case.
func isNodeadmConfigFile(name string) bool {
	lower := strings.ToLower(name)
	return strings.HasSuffix(lower, ".yaml") || strings.HasSuffix(lower, ".yml") || strings.HasSuffix(lower, ".json")
}

// readDropInDir reads the files of dir whose names take, in name order; with
// multipart, a MIME multipart file gives its NodeConfig parts (nodeadm: a file of
// them with none is an error).
func readDropInDir(files NodeFiles, dir string, take func(string) bool, multipart bool) ([]nodeconfig.Source, error) {
	names, err := files.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	var out []nodeconfig.Source
	n := 0
	for _, name := range names {
		p := path.Join(dir, name)
		if !take(name) {
			continue
		}
		if st, err := files.Stat(p); err == nil && st.IsDir() {
			continue
		}
		if n++; n > maxDropIns {
			return nil, fmt.Errorf("%s: more than %d drop-ins", dir, maxDropIns)
		}
		b, err := readDropIn(files, p)
		if err != nil {
			return nil, err
		}
		if !multipart || !userdata.IsMultipart(b) {
			out = append(out, nodeconfig.Source{Where: p, Body: b})
			continue
		}
		parts, err := userdata.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		sources := nodeconfig.Sources(parts)
		if len(sources) == 0 {
			return nil, fmt.Errorf("%s: a MIME multipart document with no NodeConfig part (Content-Type: %s)", p, userdata.TypeNodeConfig)
		}
		for _, s := range sources {
			out = append(out, nodeconfig.Source{Where: p + " " + s.Where, Body: s.Body})
		}
	}
	return out, nil
}

// readDropIn reads one drop-in through userdata.MaxUserData.
func readDropIn(files NodeFiles, p string) ([]byte, error) {
	var b []byte
	var err error
	if lf, ok := files.(limitedFiles); ok {
		b, err = lf.ReadFileLimit(p, userdata.MaxUserData)
	} else {
		b, err = files.ReadFile(p)
	}
	if err != nil {
		return nil, err
	}
	if len(b) > userdata.MaxUserData {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", p, len(b), userdata.MaxUserData)
	}
	return b, nil
}
