package v1

import (
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/component-base/featuregate"
)

const LoggingBetaOptions featuregate.Feature = "LoggingBetaOptions"

func featureGates() map[featuregate.Feature]featuregate.VersionedSpecs {
	return map[featuregate.Feature]featuregate.VersionedSpecs{
		LoggingBetaOptions: {{Version: version.MustParse("1.28"), Default: true, PreRelease: featuregate.Beta}},
	}
}

func AddFeatureGates(mutableFeatureGate featuregate.MutableVersionedFeatureGate) error {
	return mutableFeatureGate.AddVersioned(featureGates())
}
