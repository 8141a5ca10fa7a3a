package kubeletconf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/yamljson"
)

// The placeholders of the AL2 AMI's kubeconfig template, which bootstrap.sh's sed
// replaced in place (s,MASTER_ENDPOINT,<endpoint>,g and so on).
const (
	PlaceholderServer  = "MASTER_ENDPOINT"
	PlaceholderRegion  = "AWS_REGION"
	PlaceholderCluster = "CLUSTER_NAME"
)

// KubeconfigTemplate is the AL2 AMI's /var/lib/kubelet/kubeconfig before
// bootstrap.sh (templates/al2/runtime/kubelet-kubeconfig): Render's AL2 kubeconfig
// with its placeholders.
func KubeconfigTemplate() []byte {
	return fmt.Appendf(nil, kubeconfigFormat, DefaultCAFile, PlaceholderServer, `"`+PlaceholderCluster+`"`, `"`+PlaceholderRegion+`"`)
}

// HasKubeconfigPlaceholder reports whether b, a node's kubeconfig, is a template:
// it names one of the placeholders bootstrap.sh's sed replaces.
func HasKubeconfigPlaceholder(b []byte) bool {
	for _, p := range []string{PlaceholderServer, PlaceholderRegion, PlaceholderCluster} {
		if bytes.Contains(b, []byte(p)) {
			return true
		}
	}
	return false
}

// CheckKubeconfigTemplate checks a node's kubeconfig template (the image's, as the
// user data before bootstrap.sh left it): YAML or JSON at most inputcheck.MaxDepth
// deep, no control character in a key or string, an object of kind Config.
func CheckKubeconfigTemplate(b []byte) error {
	_, err := kubeconfigObject(b)
	return err
}

func kubeconfigObject(b []byte) (map[string]any, error) {
	j, err := yamljson.ToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if err := inputcheck.CheckJSONDepth(j); err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(j, &v); err != nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, errors.New("want a kubeconfig (kind: Config)")
	}
	if problems := inputcheck.CheckTreeText(m, ""); len(problems) > 0 {
		return nil, errors.New(quote.List(problems))
	}
	if k, _ := m["kind"].(string); k != "Config" {
		return nil, fmt.Errorf("kind: %s, want Config", quoteOrMissing(m["kind"]))
	}
	return m, nil
}

// FillKubeconfigTemplate replaces the placeholders of a kubeconfig template as
// bootstrap.sh's sed did, every occurrence (server, region and cluster are checked
// values: an https URL, a region, a cluster name or ID, none of which YAML reads
// differently where the template has its placeholder), and checks that the result
// is a kubeconfig. It is pure.
func FillKubeconfigTemplate(tmpl []byte, server, region, cluster string) ([]byte, error) {
	out := bytes.ReplaceAll(tmpl, []byte(PlaceholderServer), []byte(server))
	out = bytes.ReplaceAll(out, []byte(PlaceholderRegion), []byte(region))
	out = bytes.ReplaceAll(out, []byte(PlaceholderCluster), []byte(cluster))
	if _, err := kubeconfigObject(out); err != nil {
		return nil, fmt.Errorf("%s (the node's template, filled in as bootstrap.sh did): %w", KubeconfigPath, err)
	}
	return out, nil
}
