package logs

import (
	"flag"

	"github.com/spf13/pflag"

	"k8s.io/klog/v2"
)

var packageFlags = flag.NewFlagSet("logging", flag.ContinueOnError)

func init() {
	klog.InitFlags(packageFlags)
	packageFlags.Duration("log-flush-frequency", 0, "usage")
}

type Option func(*bool)

func SkipLoggingConfigurationFlags() Option { return func(b *bool) { *b = true } }

func AddFlags(fs *pflag.FlagSet, opts ...Option) {
	skip := false
	packageFlags.VisitAll(func(f *flag.Flag) {
		pf := pflag.PFlagFromGoFlag(f)
		switch f.Name {
		case "v", "log-flush-frequency":
			if skip {
				return
			}
		default:
			pf.Deprecated = "klog flags are deprecated"
		}
		fs.AddFlag(pf)
	})
}
