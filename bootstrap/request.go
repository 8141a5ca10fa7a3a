package bootstrap

import (
	"fmt"
	"strings"

	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/userdata"
)

// Request is what some user data asks of the node.
type Request struct {
	// Config is the run's configuration, from either front end.
	Config *Config
	// NodeConfig is set when it came from NodeConfigs; From says from where.
	NodeConfig bool
	From       string
}

// RequestFromNodeConfigs merges the NodeConfig parts and the drop-ins and builds the
// run's Config from them with s; ok is false when there are none. `eksboot init`
// and `eksboot render` share it.
func RequestFromNodeConfigs(parts []userdata.Part, dropIns []nodeconfig.Source, s Settings) (r Request, ok bool, err error) {
	sources := append(nodeconfig.Sources(parts), dropIns...)
	if len(sources) == 0 {
		return Request{}, false, nil
	}
	var from []string
	for _, s := range sources {
		from = append(from, s.Where)
	}
	r = Request{NodeConfig: true, From: "NodeConfig from " + strings.Join(from, ", ")}
	nc, err := nodeconfig.DecodeAndMerge(sources)
	if err != nil {
		return r, true, fmt.Errorf("user data: %w", err)
	}
	if err := nodeconfig.Validate(nc); err != nil {
		return r, true, fmt.Errorf("user data: merged NodeConfig: %w", err)
	}
	r.Config, err = FromNodeConfig(nc, s)
	if err != nil { // bad user data is a failure of the boot (exit 1), not a bad command line
		return r, true, fmt.Errorf("user data: merged NodeConfig: %s", err)
	}
	return r, true, nil
}
