package options

import (
	"github.com/spf13/pflag"

	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/kubernetes/pkg/kubelet/config"
)

const nodeIPFlag = "node" + "-ip"

type KubeletFlags struct {
	config.ContainerRuntimeOptions
	NodeIP string
}

func NewKubeletFlags() *KubeletFlags { return &KubeletFlags{} }

func (f *KubeletFlags) AddFlags(mainfs *pflag.FlagSet) {
	fs := pflag.NewFlagSet("", pflag.ExitOnError)
	defer func() {
		fs.VisitAll(func(f *pflag.Flag) {
			if len(f.Deprecated) > 0 {
				f.Hidden = false
			}
		})
		mainfs.AddFlagSet(fs)
	}()
	f.ContainerRuntimeOptions.AddFlags(fs)
	f.addOSFlags(fs)
	fs.StringVar(&f.NodeIP, nodeIPFlag, "", "usage")
	fs.String("old_style", "", "usage")
	fs.MarkDeprecated("old_style", "going away")
	fs.BoolVar(nil, "seccomp-default", false, "the `RuntimeDefault` profile")
	fs.Var(nil, "lock-file", "usage")
	fs.Lookup("lock-file").NoOptDefVal = "/var/run/kubelet.lock"
}

func AddKubeletConfigFlags(mainfs *pflag.FlagSet, c *struct{ Logging struct{} }) {
	fs := pflag.NewFlagSet("", pflag.ExitOnError)
	defer mainfs.AddFlagSet(fs)
	fs.Var(nil, "feature-gates", "usage")
	fs.Int32VarP(nil, "max-pods", "m", 110, "usage")
	fs.MarkHidden("max-pods")
	logsapi.AddFlags(&c.Logging, fs)
}
