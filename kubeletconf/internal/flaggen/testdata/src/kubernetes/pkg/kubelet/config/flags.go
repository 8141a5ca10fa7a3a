package config

import "github.com/spf13/pflag"

type ContainerRuntimeOptions struct{ RuntimeCgroups string }

func (s *ContainerRuntimeOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&s.RuntimeCgroups, "runtime-cgroups", "", "usage")
}
