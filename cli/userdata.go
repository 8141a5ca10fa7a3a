package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

// dropInDir holds NodeConfig drop-ins, merged after the user data's NodeConfigs.
const dropInDir = "/etc/eks/eksboot.d"

// nodeRequest is what some user data asks of the node.
type nodeRequest struct {
	// Config is the run's configuration, from either front end.
	Config *bootstrap.Config
	// NodeConfig is set when they came from NodeConfigs; From says from where.
	NodeConfig bool
	From       string
}

// errNothing means the user data has neither NodeConfig nor bootstrap.sh call.
var errNothing = errors.New("no NodeConfig part and no /etc/eks/bootstrap.sh command line in the user data")

// requestFromNodeConfigs merges the NodeConfig parts and the drop-ins onto base;
// ok is false when there are none.
func requestFromNodeConfigs(parts []userdata.Part, dropIns []nodeconfig.Source, s bootstrap.Settings) (nodeRequest, bool, error) {
	sources := append(nodeconfig.Sources(parts), dropIns...)
	if len(sources) == 0 {
		return nodeRequest{}, false, nil
	}
	var from []string
	for _, s := range sources {
		from = append(from, s.Where)
	}
	r := nodeRequest{NodeConfig: true, From: "NodeConfig from " + strings.Join(from, ", ")}
	nc, err := nodeconfig.DecodeAndMerge(sources)
	if err != nil {
		return r, true, fmt.Errorf("user data: %w", err)
	}
	if err := nodeconfig.Validate(nc); err != nil {
		return r, true, fmt.Errorf("user data: merged NodeConfig: %w", err)
	}
	r.Config, err = bootstrap.FromNodeConfig(nc, s)
	if err != nil { // bad user data is a failure of the boot (exit 1), not a bad command line
		return r, true, fmt.Errorf("user data: merged NodeConfig: %s", err)
	}
	return r, true, nil
}

// readDropIns reads /etc/eks/eksboot.d/*.yaml under root, in name order.
func readDropIns(root *rootfs.Root) ([]nodeconfig.Source, error) {
	dir, err := root.Resolve(dropInDir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dropInDir, err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".yaml") || strings.HasSuffix(e.Name(), ".yml")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var out []nodeconfig.Source
	for _, n := range names {
		p := path.Join(dropInDir, n)
		b, err := root.ReadFileLimit(p, userdata.MaxUserData)
		if err != nil {
			return nil, err
		}
		if len(b) > userdata.MaxUserData {
			return nil, fmt.Errorf("%s: %d bytes, more than the %d allowed", p, len(b), userdata.MaxUserData)
		}
		out = append(out, nodeconfig.Source{Where: p, Body: b})
	}
	return out, nil
}
