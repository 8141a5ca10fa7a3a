package features

import (
	"k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/version"
	genericfeatures "k8s.io/apiserver/pkg/features"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/component-base/featuregate"
)

const (
	Old       featuregate.Feature = "Old"
	Graduated featuregate.Feature = "Gradu" + "ated"
	Later     featuregate.Feature = "Later"
	Compat    featuregate.Feature = "Compat"
)

var defaultVersionedKubernetesFeatureGates = map[featuregate.Feature]featuregate.VersionedSpecs{
	Old: {
		{Version: version.MustParse("1.0"), Default: true, PreRelease: featuregate.GA},
		{Version: version.MustParse("1.30"), Default: false, PreRelease: featuregate.Deprecated, LockToDefault: true},
	},
	Graduated: {
		{Version: version.MustParse("1.29"), Default: false, PreRelease: featuregate.Alpha},
		{Version: version.MajorMinor(1, 30), Default: true, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.31"), Default: true, PreRelease: featuregate.GA, LockToDefault: true},
	},
	Later: {
		{Version: version.MustParse("1.31"), Default: false, PreRelease: featuregate.Alpha},
	},
	Compat: {
		{Version: version.MustParse("1.30"), Default: false, PreRelease: featuregate.Beta},
		{Version: version.MustParse("1.30"), Default: true, PreRelease: featuregate.Beta, MinCompatibilityVersion: version.MustParse("1.30")},
	},
	genericfeatures.Generic: {
		{Version: version.MustParse("1.20"), Default: true, PreRelease: featuregate.Beta},
	},
}

func init() {
	ca := &clientAdapter{utilfeature.DefaultMutableFeatureGate}
	runtime.Must(clientfeatures.AddVersionedFeaturesToExistingFeatureGates(ca))
	clientfeatures.ReplaceFeatureGates(ca)
	runtime.Must(utilfeature.DefaultMutableFeatureGate.AddVersioned(defaultVersionedKubernetesFeatureGates))
	runtime.Must(utilfeature.DefaultMutableFeatureGate.AddDependencies(nil))
}

type clientAdapter struct {
	mfg featuregate.MutableVersionedFeatureGate
}
