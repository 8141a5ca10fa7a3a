package feature

import "k8s.io/component-base/featuregate"

var DefaultMutableFeatureGate featuregate.MutableVersionedFeatureGate = featuregate.NewFeatureGate()
