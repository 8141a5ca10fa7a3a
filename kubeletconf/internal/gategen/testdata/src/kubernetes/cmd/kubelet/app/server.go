package app

import (
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	logsapi "k8s.io/component-base/logs/api/v1"
	_ "k8s.io/kubernetes/pkg/features"
)

func init() {
	utilruntime.Must(logsapi.AddFeatureGates(utilfeature.DefaultMutableFeatureGate))
}

// NewKubeletCommand sets the gates at run time: no registration.
func NewKubeletCommand() {
	_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(nil)
}
