package featuregate

import "k8s.io/apimachinery/pkg/util/version"

type Feature string

type prerelease string

const (
	PreAlpha   = prerelease("PRE-ALPHA")
	Alpha      = prerelease("ALPHA")
	Beta       = prerelease("BETA")
	GA         = prerelease("")
	Deprecated = prerelease("DEPRECATED")
)

type FeatureSpec struct {
	Default                 bool
	LockToDefault           bool
	PreRelease              prerelease
	Version                 *version.Version
	MinCompatibilityVersion *version.Version
}

type VersionedSpecs []FeatureSpec

type MutableVersionedFeatureGate interface {
	AddVersioned(map[Feature]VersionedSpecs) error
}

const (
	allAlphaGate Feature = "AllAlpha"
	allBetaGate  Feature = "AllBeta"
)

var defaultFeatures = map[Feature]VersionedSpecs{
	allAlphaGate: {{Default: false, PreRelease: Alpha, Version: version.MajorMinor(0, 0)}},
	allBetaGate:  {{Default: false, PreRelease: Beta, Version: version.MajorMinor(0, 0)}},
}

type featureGate struct{}

func NewVersionedFeatureGate(v *version.Version) *featureGate { return &featureGate{} }

func NewFeatureGate() *featureGate { return NewVersionedFeatureGate(nil) }
