package v1

import "github.com/spf13/pflag"

const LogFlushFreqFlagName = "log-flush-frequency"

func AddFlags(c *struct{}, fs *pflag.FlagSet) {
	fs.String("logging-format", "text", "usage")
	fs.Duration(LogFlushFreqFlagName, 0, "usage")
	fs.VarP(nil, "v", "v", "usage")
}
