package klog

import "flag"

func InitFlags(flagset *flag.FlagSet) {
	flagset.Var(nil, "v", "usage")
	flagset.String("log_dir", "", "usage")
}
