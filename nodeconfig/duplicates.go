package nodeconfig

import (
	"fmt"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/eksboot/eksboot/internal/quote"
)

// duplicateKeys lists every mapping key of the YAML (or JSON) document doc that
// appears twice in its mapping, by its path (spec.cluster.name: duplicate key).
// sigs.k8s.io/yaml, which decodes the document, keeps the last value silently, so a
// NodeConfig with two names could join the wrong cluster. A document that this
// parser cannot read is left to the decoder to report; aliases are not followed.
func duplicateKeys(doc []byte) Errors {
	var root yamlv3.Node
	if err := yamlv3.Unmarshal(doc, &root); err != nil {
		return nil
	}
	var errs Errors
	var walk func(n *yamlv3.Node, at string)
	walk = func(n *yamlv3.Node, at string) {
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				walk(c, at)
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", at, i))
			}
		case yamlv3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yamlv3.ScalarNode || k.Tag == "!!merge" {
					continue
				}
				path := join(at, quote.Name(k.Value))
				if seen[k.Value] {
					errs = append(errs, path+": duplicate key")
					continue
				}
				seen[k.Value] = true
				walk(v, path)
			}
		}
	}
	walk(&root, "")
	return errs
}
