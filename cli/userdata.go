package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

// dropInDir holds NodeConfig drop-ins, merged after the user data's NodeConfigs.
const dropInDir = "/etc/eks/eksboot.d"

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
