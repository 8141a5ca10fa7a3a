package options

import (
	"flag"
	"strings"

	"github.com/spf13/pflag"

	"k8s.io/component-base/logs"
	"k8s.io/component-base/version/verflag"

	_ "github.com/google/cadvisor/manager"
)

func AddGlobalFlags(fs *pflag.FlagSet) {
	local := pflag.NewFlagSet("", pflag.ExitOnError)
	register(flag.CommandLine, local, "housekeeping_interval")
	registerDeprecated(flag.CommandLine, local, "boot_id_file", "a cadvisor flag")
	registerDeprecated(flag.CommandLine, local, "enable_load_reader", "a cadvisor flag")
	fs.AddFlagSet(local)
	verflag.AddFlags(fs)
	logs.AddFlags(fs, logs.SkipLoggingConfigurationFlags())
}

func normalize(s string) string { return strings.ReplaceAll(s, "_", "-") }

func register(global *flag.FlagSet, local *pflag.FlagSet, globalName string) {
	local.AddFlag(pflag.PFlagFromGoFlag(global.Lookup(globalName)))
}

func registerDeprecated(global *flag.FlagSet, local *pflag.FlagSet, globalName, deprecated string) {
	register(global, local, globalName)
	local.Lookup(normalize(globalName)).Deprecated = deprecated
}
