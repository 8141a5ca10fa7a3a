package kubeletconf

import (
	"bytes"
	"encoding/json"
)

// Image credential provider paths: the kubelet unit passes them as
// --image-credential-provider-config and --image-credential-provider-bin-dir. The
// node image ships the provider binary in the directory; on AL2023 it ships no config,
// which eksboot writes at every boot for the kubelet's version (without the file the
// kubelet exits).
const (
	CredentialProviderDir    = "/etc/eks/image-credential-provider"
	CredentialProviderConfig = CredentialProviderDir + "/config.json"
	// ECRCredentialProvider is the provider's name, the file name of its binary.
	ECRCredentialProvider = "ecr-credential-provider"
)

// ecrMatchImages are the registries the ECR credential provider answers for: ECR's
// private registries in every partition (and their dual-stack and FIPS names), and
// ECR Public.
var ecrMatchImages = []string{
	"*.dkr.ecr.*.amazonaws.com",
	"*.dkr-ecr.*.on.aws",
	"*.dkr.ecr.*.amazonaws.com.cn",
	"*.dkr-ecr.*.on.amazonwebservices.com.cn",
	"*.dkr.ecr-fips.*.amazonaws.com",
	"*.dkr-ecr-fips.*.on.aws",
	"*.dkr.ecr.*.c2s.ic.gov",
	"*.dkr.ecr.*.sc2s.sgov.gov",
	"*.dkr.ecr.*.cloud.adc-e.uk",
	"*.dkr.ecr.*.csp.hci.ic.gov",
	"*.dkr.ecr.*.amazonaws.eu",
	"public.ecr.aws",
}

// credentialProviderConfig is the kubelet's CredentialProviderConfig
// (kubelet.config.k8s.io), the fields eksboot writes.
type credentialProviderConfig struct {
	Kind       string               `json:"kind"`
	APIVersion string               `json:"apiVersion"`
	Providers  []credentialProvider `json:"providers"`
}

type credentialProvider struct {
	Name                 string   `json:"name"`
	MatchImages          []string `json:"matchImages"`
	DefaultCacheDuration string   `json:"defaultCacheDuration"`
	APIVersion           string   `json:"apiVersion"`
}

// CredentialProviderConfigFor renders /etc/eks/image-credential-provider/config.json
// for the kubelet of row: the ECR provider with the config and provider apiVersions
// that kubelet reads, and ecr-public.aws.com from 1.32. It is pure.
func CredentialProviderConfigFor(row KubeletRow) []byte {
	match := append([]string(nil), ecrMatchImages...)
	if row.ECRPublicAlias {
		match = append(match, "ecr-public.aws.com")
	}
	c := credentialProviderConfig{
		Kind:       "CredentialProviderConfig",
		APIVersion: row.CredentialProviderAPI,
		Providers: []credentialProvider{{
			Name:                 ECRCredentialProvider,
			MatchImages:          match,
			DefaultCacheDuration: "12h0m0s",
			APIVersion:           row.CredentialProviderPluginAPI,
		}},
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	_ = enc.Encode(c) // only strings: cannot fail
	return b.Bytes()
}
