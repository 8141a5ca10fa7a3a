package verflag

import (
	"flag"

	"github.com/spf13/pflag"
)

const versionFlagName = "version"

func AddFlags(fs *pflag.FlagSet) {
	fs.AddFlag(pflag.PFlagFromGoFlag(flag.Lookup(versionFlagName)))
}
