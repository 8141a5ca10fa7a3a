package klog

import "flag"

type Level int32

func (l *Level) String() string   { return "" }
func (l *Level) Set(string) error { return nil }

type boolish bool

func (b *boolish) String() string   { return "" }
func (b *boolish) Set(string) error { return nil }
func (b *boolish) IsBoolFlag() bool { return true }

type settings struct {
	verbosity Level
	oneOutput boolish
}

type loggingT struct {
	settings
}

var logging loggingT

func InitFlags(flagset *flag.FlagSet) {
	flagset.Var(&logging.verbosity, "v", "usage")
	flagset.String("log_dir", "", "usage")
	flagset.BoolVar(nil, "logtostderr", true, "usage")
	flagset.Var(&logging.oneOutput, "one_output", "usage")
}
