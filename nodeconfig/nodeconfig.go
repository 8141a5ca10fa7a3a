package nodeconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/yamljson"
	"github.com/eksboot/eksboot/kubeletconf"

	yamlv3 "go.yaml.in/yaml/v3"
)

// NodeConfig's group, version and kind.
const (
	APIVersion = "node.eks.aws/v1alpha1"
	Kind       = "NodeConfig"
)

// NodeConfig is nodeadm's node.eks.aws/v1alpha1 NodeConfig, as far as eksboot reads
// it, plus eksboot's spec.maxPods.
type NodeConfig struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Metadata   map[string]any `json:"metadata,omitempty"`
	Spec       Spec           `json:"spec"`
}

// Spec is the NodeConfig's spec.
type Spec struct {
	Cluster      Cluster         `json:"cluster"`
	Containerd   Containerd      `json:"containerd"`
	Instance     Instance        `json:"instance"`
	Kubelet      Kubelet         `json:"kubelet"`
	FeatureGates map[string]bool `json:"featureGates,omitempty"`
	// MaxPods is an eksboot addition: bootstrap's --max-pods-* options.
	MaxPods MaxPods `json:"maxPods"`
}

// Cluster is spec.cluster: what the node joins.
type Cluster struct {
	Name                 string `json:"name,omitempty"`
	APIServerEndpoint    string `json:"apiServerEndpoint,omitempty"`
	CertificateAuthority string `json:"certificateAuthority,omitempty"` // base64 of the PEM
	CIDR                 string `json:"cidr,omitempty"`
	EnableOutpost        *bool  `json:"enableOutpost,omitempty"`
	ID                   string `json:"id,omitempty"`
}

// Containerd is spec.containerd.
type Containerd struct {
	Config          string         `json:"config,omitempty"`
	BaseRuntimeSpec map[string]any `json:"baseRuntimeSpec,omitempty"`
	// Configs are the config of every NodeConfig merged into this one, in order
	// (Merge fills it): each is merged onto containerd's config as TOML, so a later
	// part adds to an earlier one instead of replacing it, as in nodeadm.
	Configs []string `json:"-"`
}

// Instance is spec.instance.
type Instance struct {
	LocalStorage LocalStorage                 `json:"localStorage"`
	Environment  map[string]map[string]string `json:"environment,omitempty"`
	Network      Network                      `json:"network"`
}

// LocalStorage is spec.instance.localStorage.
type LocalStorage struct {
	Strategy       string   `json:"strategy,omitempty"`
	MountPath      string   `json:"mountPath,omitempty"`
	DisabledMounts []string `json:"disabledMounts,omitempty"`
}

// Network is spec.instance.network.
type Network struct {
	Nameservers []string `json:"nameservers,omitempty"`
	Domains     []string `json:"domains,omitempty"`
}

// Kubelet is spec.kubelet.
type Kubelet struct {
	// Config is a partial KubeletConfiguration (kubelet.config.k8s.io/v1beta1),
	// checked where it enters: the decoding of a NodeConfig (decodeOne) makes it
	// with kubeletconf.CheckOverlay, after the walk that names each problem's path
	// (checkKubeletConfig); nothing after takes it unchecked.
	Config            kubeletconf.CheckedOverlay `json:"config,omitempty"`
	Flags             []string                   `json:"flags,omitempty"`
	MaxPodsExpression string                     `json:"maxPodsExpression,omitempty"`
}

// MaxPods is spec.maxPods (eksboot's): how max pods is worked out, as bootstrap's
// --max-pods-* flags.
type MaxPods struct {
	Mode                             string `json:"mode,omitempty"`
	CustomNetworking                 *bool  `json:"customNetworking,omitempty"`
	SecurityGroupsForPods            *bool  `json:"securityGroupsForPods,omitempty"`
	MaxENI                           *int   `json:"maxENI,omitempty"`
	Uncapped                         *bool  `json:"uncapped,omitempty"`
	KubeReservedFromEffectiveMaxPods *bool  `json:"kubeReservedFromEffectiveMaxPods,omitempty"`
}

// Errors is every problem found in some input, each naming where it is.
type Errors []string

// Error lists the first few problems and the count of the rest, on one line.
func (e Errors) Error() string { return quote.List(e) }

// err returns e as an error, nil when empty.
func (e Errors) err() error {
	if len(e) == 0 {
		return nil
	}
	return e
}

var docSep = lazy.Regexp{Expr: `(?m)^---[ \t]*\r?$`}

// DecodeNodeConfigs decodes the YAML or JSON documents of one NodeConfig source
// strictly: unknown fields, values of the wrong type, another kind or version are
// errors with their path. where names the source ("part 2 (application/node.eks.aws)",
// a file). Every problem is reported, joined.
func DecodeNodeConfigs(b []byte, where string) ([]NodeConfig, error) {
	var out []NodeConfig
	var errs Errors
	var docs []string
	for _, doc := range docSep.Get().Split(string(b), -1) {
		if strings.TrimSpace(stripComments(doc)) != "" {
			docs = append(docs, doc)
		}
	}
	for i, doc := range docs {
		at := where
		if len(docs) > 1 {
			at = fmt.Sprintf("%s document %d", where, i+1)
		}
		nc, err := decodeOne([]byte(doc))
		if err != nil {
			var list Errors
			if errors.As(err, &list) {
				for _, e := range list {
					errs = append(errs, at+": "+e)
				}
			} else {
				errs = append(errs, fmt.Sprintf("%s: %v", at, err))
			}
			continue
		}
		out = append(out, *nc)
	}
	if len(out) == 0 && len(errs) == 0 {
		errs = append(errs, where+": no NodeConfig in it (empty)")
	}
	return out, errs.err()
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// decodeOne decodes one document.
func decodeOne(doc []byte) (*NodeConfig, error) {
	doc = bytes.ReplaceAll(doc, []byte("\r\n"), []byte("\n"))
	var root yamlv3.Node // parsed once, for the walk and the conversion
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", &yamljson.ParseError{Err: err})
	}
	if errs := duplicateKeys(&root); len(errs) > 0 {
		return nil, errs
	}
	j, err := yamljson.NodeToJSON(&root)
	var expansion *yamljson.ExpansionError
	if errors.As(err, &expansion) {
		return nil, err // an alias bomb is YAML: the bound is the problem
	}
	if err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	if err := inputcheck.CheckJSONDepth(j); err != nil {
		return nil, err // what duplicateKeys's parser could not read
	}
	var generic any
	if err := json.Unmarshal(j, &generic); err != nil {
		return nil, fmt.Errorf("not YAML or JSON: %w", err)
	}
	obj, ok := generic.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("want a NodeConfig object (apiVersion: %s, kind: %s), got %s", APIVersion, Kind, jsonKind(generic))
	}
	var errs Errors
	if v, _ := obj["apiVersion"].(string); v != APIVersion {
		errs = append(errs, fmt.Sprintf("apiVersion: %s, want %s", quoteOrMissing(obj["apiVersion"]), APIVersion))
	}
	if k, _ := obj["kind"].(string); k != Kind {
		errs = append(errs, fmt.Sprintf("kind: %s, want %s", quoteOrMissing(obj["kind"]), Kind))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	errs = checkFields(obj, typeOf[NodeConfig](), "", errs)
	errs = checkText(obj, "", errs)
	var kubeletConfig map[string]any
	if kc, ok := obj["spec"].(map[string]any); ok {
		if k, ok := kc["kubelet"].(map[string]any); ok {
			if c, ok := k["config"].(map[string]any); ok {
				kubeletConfig = c
				errs = checkKubeletConfig(c, "spec.kubelet.config", errs)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	var nc NodeConfig
	if err := json.Unmarshal(j, &nc); err != nil { // spec.kubelet.config: below
		return nil, err
	}
	// The one strict check of spec.kubelet.config, for what the walk above takes as
	// it is (durations, quantities, numbers out of their type's range).
	checked, err := kubeletconf.CheckOverlay(kubeletConfig)
	if err != nil {
		return nil, Errors{"spec.kubelet.config: " + err.Error()}
	}
	nc.Spec.Kubelet.Config = checked
	return &nc, nil
}

func quoteOrMissing(v any) string {
	if v == nil {
		return "missing"
	}
	return quote.Value(fmt.Sprint(v))
}
