package kubeletconf

import (
	"fmt"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/nodefile"
)

// Node paths of the kubelet's files (DefaultCAFile is the cluster CA's; the
// drop-ins are in KubeletDropInDir, CredentialProviderConfig is the credential
// provider's).
const (
	KubeconfigPath          = "/var/lib/kubelet/kubeconfig"
	BootstrapKubeconfigPath = "/var/lib/kubelet/bootstrap-kubeconfig"
	ConfigPath              = "/etc/kubernetes/kubelet/kubelet-config.json"
	UnitPath                = "/etc/systemd/system/kubelet.service"
	ArgsDropInPath          = KubeletDropInDir + "/" + KubeletArgsDropIn
	ExtraArgsDropInPath     = KubeletDropInDir + "/" + KubeletExtraArgsDropIn
)

// Unit is the kubelet's systemd unit, which reads every file Files returns.
const Unit = "kubelet.service"

// Node is what the kubelet's files are made of on one node.
type Node struct {
	// CA is the cluster CA certificate (PEM), written to DefaultCAFile.
	CA []byte
	// Kubeconfig is the kubelet's token kubeconfig; its CAFile is DefaultCAFile.
	Kubeconfig Kubeconfig
	// KubeconfigTemplate, when set, is the node's own kubeconfig template (the AL2
	// image's, as the user data before bootstrap.sh edited it): the token kubeconfig
	// is it with Kubeconfig's values in its placeholders, as bootstrap.sh's sed made
	// it (FillKubeconfigTemplate), instead of Kubeconfig.Render.
	KubeconfigTemplate []byte
	// ClientCert, when set, is the kubelet's client certificate of a local cluster on
	// AWS Outposts: the kubeconfig uses it, and the token kubeconfig, naming the
	// cluster BootstrapClusterName, becomes the bootstrap kubeconfig of the kubelet's
	// TLS bootstrap. "": no bootstrap kubeconfig (a stale one is removed).
	ClientCert           string
	BootstrapClusterName string
	// Config is kubelet-config.json's configuration, built (and, without
	// ConfigDir, overlaid with the NodeConfig's spec.kubelet.config).
	Config *KubeletConfiguration
	// ConfigDir: the kubelet runs with --config-dir ConfigDropInDir
	// (KubeletRow.ConfigDir), and NodeConfig, a NodeConfig's spec.kubelet.config,
	// goes to its drop-in NodeConfigDropInPath, where nodeadm puts it, so that the
	// image's drop-ins apply before or after it by name as under nodeadm. Without
	// ConfigDir, or with an empty NodeConfig, a stale drop-in is removed.
	ConfigDir  bool
	NodeConfig CheckedOverlay
	// Args is KUBELET_ARGS; ExtraArgs is KUBELET_EXTRA_ARGS ("": no drop-in, a stale
	// one is removed).
	Args, ExtraArgs string
	// CredentialProvider is the kubelet table's row whose credential provider
	// config eksboot writes; nil leaves the image's file as it is.
	CredentialProvider *KubeletRow
}

// Files renders the kubelet's files, each naming kubelet.service: the CA, the
// kubeconfig (and the bootstrap kubeconfig of a local cluster), kubelet-config.json
// and the NodeConfig's drop-in of the configuration directory, the unit, the KUBELET_ARGS and KUBELET_EXTRA_ARGS drop-ins and the credential
// provider config. The unit and its drop-ins are systemd's too (Reload). It is pure.
func Files(n Node) ([]nodefile.File, error) {
	config, err := Marshal(n.Config)
	if err != nil {
		return nil, fmt.Errorf("kubelet config: %w", err)
	}
	args, err := EnvDropIn(KubeletArgsVar, n.Args)
	if err != nil {
		return nil, err
	}
	token := n.Kubeconfig
	token.CAFile = DefaultCAFile
	render := func(k Kubeconfig) ([]byte, error) {
		if n.KubeconfigTemplate == nil {
			return k.Render(), nil
		}
		return FillKubeconfigTemplate(n.KubeconfigTemplate, k.Server, k.Region, k.ClusterName)
	}
	kubeconfig, err := render(token)
	if err != nil {
		return nil, err
	}
	if n.ClientCert != "" {
		kubeconfig = ClientCertKubeconfig(token.Server, DefaultCAFile, n.ClientCert)
	}
	units := []string{Unit}
	files := []nodefile.File{
		{Path: DefaultCAFile, Data: n.CA, Mode: nodefile.Mode, Secret: true, Units: units},
		{Path: KubeconfigPath, Data: kubeconfig, Mode: nodefile.Mode, Units: units},
		{Path: ConfigPath, Data: config, Mode: nodefile.Mode, Units: units, From: "spec.kubelet.config"},
		{Path: UnitPath, Data: assets.KubeletService, Mode: nodefile.Mode, Units: units, Reload: true},
		{Path: ArgsDropInPath, Data: args, Mode: nodefile.Mode, Units: units, Reload: true},
	}
	if n.ClientCert != "" {
		token.ClusterName = n.BootstrapClusterName
		bootstrap, err := render(token)
		if err != nil {
			return nil, err
		}
		files = append(files, nodefile.File{Path: BootstrapKubeconfigPath, Data: bootstrap, Mode: nodefile.Mode, Units: units})
	} else {
		files = append(files, nodefile.File{Path: BootstrapKubeconfigPath, Remove: true, Units: units})
	}
	dropIn := nodefile.File{Path: NodeConfigDropInPath, Remove: true, Units: units}
	if n.ConfigDir && n.NodeConfig.Len() > 0 {
		b, err := NodeConfigDropInFile(n.NodeConfig)
		if err != nil {
			return nil, fmt.Errorf("spec.kubelet.config: %w", err)
		}
		dropIn = nodefile.File{Path: NodeConfigDropInPath, Data: b, Mode: nodefile.Mode, Units: units, From: "spec.kubelet.config"}
	}
	files = append(files, dropIn)
	if n.CredentialProvider != nil {
		files = append(files, nodefile.File{Path: CredentialProviderConfig, Data: CredentialProviderConfigFor(*n.CredentialProvider), Mode: nodefile.Mode, Units: units})
	}
	if n.ExtraArgs != "" {
		extra, err := EnvDropIn(KubeletExtraArgsVar, n.ExtraArgs)
		if err != nil {
			return nil, fmt.Errorf("--kubelet-extra-args: %w", err)
		}
		files = append(files, nodefile.File{Path: ExtraArgsDropInPath, Data: extra, Mode: nodefile.Mode, Units: units, Reload: true, From: "--kubelet-extra-args (spec.kubelet.flags)"})
	} else {
		files = append(files, nodefile.File{Path: ExtraArgsDropInPath, Remove: true, Units: units, Reload: true})
	}
	return files, nil
}
