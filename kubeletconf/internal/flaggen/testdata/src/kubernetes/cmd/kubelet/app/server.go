package app

import (
	"github.com/spf13/pflag"

	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

func NewKubeletCommand() {
	cleanFlagSet := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	kubeletFlags := options.NewKubeletFlags()
	kubeletFlags.AddFlags(cleanFlagSet)
	options.AddKubeletConfigFlags(cleanFlagSet, nil)
	options.AddGlobalFlags(cleanFlagSet)
	cleanFlagSet.BoolP("help", "h", false, "help for kubelet")
	_ = cleanFlagSet.Parse(nil)
}
