package features

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/util/version"
)

type Feature string

type prerelease string

const (
	Alpha = prerelease("ALPHA")
	Beta  = prerelease("BETA")
)

type FeatureSpec struct {
	Default    bool
	PreRelease prerelease
	Version    *version.Version
}

type VersionedSpecs []FeatureSpec

type VersionedRegistry interface {
	AddVersioned(map[Feature]VersionedSpecs) error
}

const ClientThing Feature = "ClientThing"

var defaultVersionedKubernetesFeatureGates = map[Feature]VersionedSpecs{
	ClientThing: {{Version: version.MustParse("1.30"), Default: true, PreRelease: Beta}},
}

func AddVersionedFeaturesToExistingFeatureGates(registry VersionedRegistry) error {
	return registry.AddVersioned(defaultVersionedKubernetesFeatureGates)
}

type Gates interface{}

type featureGatesWrapper struct{ Gates }

var featureGates = &atomic.Value{}

func ReplaceFeatureGates(newFeatureGates Gates) {
	wrapped := &featureGatesWrapper{newFeatureGates}
	featureGates.Store(wrapped)
}
