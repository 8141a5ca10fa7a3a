package nodeconfig

import (
	"fmt"
	"net/netip"

	"github.com/eksboot/eksboot/userdata"

	"github.com/eksboot/eksboot/internal/quote"
)

// Source is where NodeConfigs came from, for error messages.
type Source struct {
	// Where names it: "part 2 (application/node.eks.aws)" or a file path.
	Where string
	// Body is its bytes.
	Body []byte
}

// Sources returns the NodeConfig parts of the user data, in order.
func Sources(parts []userdata.Part) []Source {
	var out []Source
	for _, p := range parts {
		if p.ContentType == userdata.TypeNodeConfig {
			out = append(out, Source{Where: p.Name(), Body: p.Body})
		}
	}
	return out
}

// DecodeAndMerge decodes every source strictly and merges the NodeConfigs in order
// (Merge). Every decoding problem of every source is reported together.
func DecodeAndMerge(sources []Source) (*NodeConfig, error) {
	var all []NodeConfig
	var errs Errors
	for _, s := range sources {
		ncs, err := DecodeNodeConfigs(s.Body, s.Where)
		if err != nil {
			if list, ok := err.(Errors); ok {
				errs = append(errs, list...)
			} else {
				errs = append(errs, err.Error())
			}
			continue
		}
		all = append(all, ncs...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if len(all) == 0 {
		return nil, nil
	}
	var merged NodeConfig
	for i, nc := range all {
		if i == 0 {
			merged = nc
			merged.Spec.Containerd.Configs = nil
			if nc.Spec.Containerd.Config != "" {
				merged.Spec.Containerd.Configs = []string{nc.Spec.Containerd.Config}
			}
			continue
		}
		Merge(&merged, nc)
	}
	return &merged, nil
}

// Merge merges src onto dst with nodeadm's rules: a non-empty scalar of src wins,
// maps merge key by key (nested maps too, lists replaced), kubelet.flags append.
func Merge(dst *NodeConfig, src NodeConfig) {
	d, s := &dst.Spec, src.Spec
	str(&d.Cluster.Name, s.Cluster.Name)
	str(&d.Cluster.APIServerEndpoint, s.Cluster.APIServerEndpoint)
	str(&d.Cluster.CertificateAuthority, s.Cluster.CertificateAuthority)
	str(&d.Cluster.CIDR, s.Cluster.CIDR)
	str(&d.Cluster.ID, s.Cluster.ID)
	ptr(&d.Cluster.EnableOutpost, s.Cluster.EnableOutpost)

	str(&d.Containerd.Config, s.Containerd.Config)
	if s.Containerd.Config != "" {
		d.Containerd.Configs = append(d.Containerd.Configs, s.Containerd.Config)
	}
	d.Containerd.BaseRuntimeSpec = mergeMaps(d.Containerd.BaseRuntimeSpec, s.Containerd.BaseRuntimeSpec)

	str(&d.Instance.LocalStorage.Strategy, s.Instance.LocalStorage.Strategy)
	str(&d.Instance.LocalStorage.MountPath, s.Instance.LocalStorage.MountPath)
	list(&d.Instance.LocalStorage.DisabledMounts, s.Instance.LocalStorage.DisabledMounts)
	for svc, env := range s.Instance.Environment {
		if d.Instance.Environment == nil {
			d.Instance.Environment = map[string]map[string]string{}
		}
		if d.Instance.Environment[svc] == nil {
			d.Instance.Environment[svc] = map[string]string{}
		}
		for k, v := range env {
			d.Instance.Environment[svc][k] = v
		}
	}
	list(&d.Instance.Network.Nameservers, s.Instance.Network.Nameservers)
	list(&d.Instance.Network.Domains, s.Instance.Network.Domains)

	d.Kubelet.Config = d.Kubelet.Config.Merge(s.Kubelet.Config)
	d.Kubelet.Flags = append(d.Kubelet.Flags, s.Kubelet.Flags...)
	str(&d.Kubelet.MaxPodsExpression, s.Kubelet.MaxPodsExpression)

	for k, v := range s.FeatureGates {
		if d.FeatureGates == nil {
			d.FeatureGates = map[string]bool{}
		}
		d.FeatureGates[k] = v
	}
	str(&d.MaxPods.Mode, s.MaxPods.Mode)
	ptr(&d.MaxPods.CustomNetworking, s.MaxPods.CustomNetworking)
	ptr(&d.MaxPods.SecurityGroupsForPods, s.MaxPods.SecurityGroupsForPods)
	ptr(&d.MaxPods.MaxENI, s.MaxPods.MaxENI)
	ptr(&d.MaxPods.Uncapped, s.MaxPods.Uncapped)
	ptr(&d.MaxPods.KubeReservedFromEffectiveMaxPods, s.MaxPods.KubeReservedFromEffectiveMaxPods)
}

func str(dst *string, src string) {
	if src != "" {
		*dst = src
	}
}

func ptr[T any](dst **T, src *T) {
	if src != nil {
		*dst = src
	}
}

func list(dst *[]string, src []string) {
	if len(src) > 0 {
		*dst = src
	}
}

// mergeMaps deep-merges src onto dst: nested objects merge, anything else is replaced.
func mergeMaps(dst, src map[string]any) map[string]any {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]any{}
	}
	for k, sv := range src {
		sm, sok := sv.(map[string]any)
		dm, dok := dst[k].(map[string]any)
		if sok && dok {
			dst[k] = mergeMaps(dm, sm)
		} else {
			dst[k] = sv
		}
	}
	return dst
}

// Validate checks the merged NodeConfig: the required cluster fields, and the values
// eksboot checks itself. Every problem is reported, each naming its field.
func Validate(nc *NodeConfig) error {
	var errs Errors
	c := nc.Spec.Cluster
	for _, f := range []struct{ name, v string }{
		{"spec.cluster.name", c.Name},
		{"spec.cluster.apiServerEndpoint", c.APIServerEndpoint},
		{"spec.cluster.certificateAuthority", c.CertificateAuthority},
		{"spec.cluster.cidr", c.CIDR},
	} {
		if f.v == "" {
			errs = append(errs, f.name+": required field missing (in every NodeConfig of the user data and drop-ins)")
		}
	}
	if c.CIDR != "" {
		if _, err := netip.ParsePrefix(c.CIDR); err != nil {
			errs = append(errs, fmt.Sprintf("spec.cluster.cidr: %s is not a CIDR such as 10.100.0.0/16", quote.Value(c.CIDR)))
		}
	}
	return errs.err()
}
