package kubeletconf

import (
	"fmt"

	"github.com/eksboot/eksboot/kubeletconf/kubeletgates"
)

// KubeletRow is what eksboot writes for one kubelet minor version: the flags that
// version still has and the defaults EKS applies to it. Kubelet looks rows up; every
// version-dependent flag and config field eksboot writes is decided here and nowhere
// else.
type KubeletRow struct {
	// Minor is the kubelet's minor version (1.Minor).
	Minor int

	// PodInfraContainerImageFlag: the kubelet still has --pod-infra-container-image
	// (removed in 1.35, kubernetes/kubernetes#133779; given to a 1.35 kubelet it exits
	// with "unknown flag"). From 1.29 the flag only kept the image from garbage
	// collection, which the CRI's pinned images do since (kubernetes#118544).
	PodInfraContainerImageFlag bool
	// PodInfraContainerImageMatters: the flag still has an effect (before 1.29).
	// nodeadm passes it only then; bootstrap.sh passed it on every version.
	PodInfraContainerImageMatters bool

	// KubeAPIQPS: kubeAPIQPS 10 and kubeAPIBurst 20, for the versions with API
	// Priority and Fairness whose defaults were still 5/10 (1.22–1.26).
	KubeAPIQPS bool

	// CredentialProviderAPI and CredentialProviderPluginAPI are the apiVersions of
	// the image credential provider config and of its providers: v1alpha1 before
	// 1.27 (nodeadm's rule; v1 is GA in 1.26), v1 from 1.27.
	CredentialProviderAPI       string
	CredentialProviderPluginAPI string
	// CredentialProvidersGate: the KubeletCredentialProviders feature gate must be
	// on for the provider to be used (before 1.28, when the gate was removed; only
	// while the kubelet has not locked it, as every gate of the row).
	CredentialProvidersGate bool
	// ECRPublicAlias: ecr-public.aws.com, the alias of public.ecr.aws, is in the ECR
	// provider's match list (nodeadm from 1.32).
	ECRPublicAlias bool

	// FeatureGates are the gates EKS turns on for this version, beyond the
	// template's RotateKubeletServerCertificate (eksGates), each only while this
	// minor's kubelet has it, has not locked it and does not deprecate it
	// (kubeletgates): a locked gate set to its lock does nothing, and the first
	// kubelet without it refuses to start (DynamicResourceAllocation, locked in
	// 1.35, is gone from 1.38).
	FeatureGates map[string]bool

	// GracefulShutdown: graceful node shutdown is on by default (2m30s, of which 30s
	// for critical pods), as nodeadm does from 1.34. No AL2 image shipped such a
	// kubelet; for the versions AL2 images had, eksboot keeps bootstrap.sh's default
	// (off, --graceful-shutdown turns it on).
	GracefulShutdown bool

	// ConfigDir: the kubelet reads a drop-in configuration directory, --config-dir
	// (KEP-3983): eksboot passes it, so that an image's config.json.d/*.conf apply
	// over kubelet-config.json in the kubelet's own order. The flag came in 1.28, but
	// 1.28 and 1.29 exit without the KUBELET_CONFIG_DROPIN_DIR_ALPHA variable
	// (cmd/kubelet/app/server.go); from 1.30 the kubelet takes it as it is.
	ConfigDir bool
}

// First and last kubelet minor versions of the table. A kubelet newer than
// LastKubeletMinor gets the LastKubeletMinor row and a warning; an older one than
// FirstKubeletMinor, the FirstKubeletMinor row with the versions' own QPS rule.
const (
	FirstKubeletMinor = 20
	LastKubeletMinor  = 38
)

// eksGates are the feature gates EKS turns on, from the minor it does:
// DynamicResourceAllocation from 1.33 ("EKS enables DRA on 1.33+", as nodeadm does)
// and MutableCSINodeAllocatableCount from 1.34 (off by default in the kubelet until
// 1.35). A row sets one only where kubeletSets allows.
var eksGates = []struct {
	name string
	from int
}{
	{"DynamicResourceAllocation", 33},
	{"MutableCSINodeAllocatableCount", 34},
}

// kubeletSets reports whether eksboot may set gate name for kubelet 1.<minor>:
// that kubelet has it, has not locked it and does not deprecate it.
func kubeletSets(minor int, name string) bool {
	g, ok := kubeletgates.Lookup(minor, name)
	return ok && !g.Locked && g.Stage != kubeletgates.Deprecated
}

// kubelets is the table, one row per minor from FirstKubeletMinor to
// LastKubeletMinor, built by row from the version each change took effect in.
var kubelets = func() []KubeletRow {
	var rows []KubeletRow
	for m := FirstKubeletMinor; m <= LastKubeletMinor; m++ {
		r := KubeletRow{
			Minor:                         m,
			PodInfraContainerImageFlag:    m < 35,
			PodInfraContainerImageMatters: m < 29,
			KubeAPIQPS:                    m >= 22 && m < 27,
			CredentialProviderAPI:         "kubelet.config.k8s.io/v1",
			CredentialProviderPluginAPI:   "credentialprovider.kubelet.k8s.io/v1",
			CredentialProvidersGate:       m < 28 && kubeletSets(m, "KubeletCredentialProviders"),
			ECRPublicAlias:                m >= 32,
			GracefulShutdown:              m >= 34,
			ConfigDir:                     m >= 30,
			FeatureGates:                  map[string]bool{},
		}
		if m < 27 {
			r.CredentialProviderAPI = "kubelet.config.k8s.io/v1alpha1"
			r.CredentialProviderPluginAPI = "credentialprovider.kubelet.k8s.io/v1alpha1"
		}
		for _, g := range eksGates {
			if m >= g.from && kubeletSets(m, g.name) {
				r.FeatureGates[g.name] = true
			}
		}
		rows = append(rows, r)
	}
	return rows
}()

// Kubelet returns the row for kubelet version v, and a warning when v is outside
// the table (the nearest row is used: a newer kubelet gets the newest known row,
// never a guess at old flags).
func Kubelet(v Version) (KubeletRow, string) {
	switch {
	case v.Major > 1 || (v.Major == 1 && v.Minor > LastKubeletMinor):
		return kubelets[len(kubelets)-1], fmt.Sprintf("kubelet %s is newer than the versions eksboot knows (1.%d-1.%d): writing what 1.%d needs", v, FirstKubeletMinor, LastKubeletMinor, LastKubeletMinor)
	case v.Major < 1 || v.Minor < FirstKubeletMinor:
		r := kubelets[0]
		r.Minor = v.Minor
		r.KubeAPIQPS = false // 1.22 introduced the higher QPS
		return r, fmt.Sprintf("kubelet %s is older than the versions eksboot knows (1.%d-1.%d): writing what 1.%d needs", v, FirstKubeletMinor, LastKubeletMinor, FirstKubeletMinor)
	}
	return kubelets[v.Minor-FirstKubeletMinor], ""
}
