package nodeconfig

import (
	"fmt"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/yamljson"
)

// duplicateKeys lists every mapping key of the parsed YAML (or JSON) document root
// that appears twice in its mapping, by its path (spec.cluster.name: duplicate key):
// twice by its name in JSON (yamljson.KeyName), so 16 and 0x10 are one key.
// The decoder (yamljson, sigs.k8s.io/yaml's rules) keeps the last value silently, so a
// NodeConfig with two names could join the wrong cluster. Aliases are not followed.
//
// It also refuses a document that nests deeper than inputcheck.MaxDepth (the
// document's mapping counted as one; through aliases too), naming the field, from
// the parser's node tree, before the document is converted and decoded: the
// parser itself stops at 10,000 levels and allocates in proportion to the
// document, but every level would reach a file (a base runtime spec 2,500 deep
// wrote 12.5 MB of indentation).
func duplicateKeys(root *yamlv3.Node) Errors {
	var errs Errors
	memo := map[*yamlv3.Node]int{}
	var walk func(n *yamlv3.Node, at string, level int)
	walk = func(n *yamlv3.Node, at string, level int) {
		if n.Kind == yamlv3.SequenceNode || n.Kind == yamlv3.MappingNode {
			level++
		}
		if n.Kind == yamlv3.AliasNode && n.Alias != nil && level+nodeDepth(n.Alias, memo) > inputcheck.MaxDepth ||
			level > inputcheck.MaxDepth {
			errs = append(errs, fmt.Sprintf("%s: nested more than %d levels deep (line %d)", fieldOf(at), inputcheck.MaxDepth, n.Line))
			return
		}
		switch n.Kind {
		case yamlv3.DocumentNode:
			for _, c := range n.Content {
				walk(c, at, level)
				if len(errs) > 0 {
					return
				}
			}
		case yamlv3.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", at, i), level)
			}
		case yamlv3.MappingNode:
			seen := map[string]bool{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind != yamlv3.ScalarNode || k.Tag == "!!merge" {
					continue
				}
				path := join(at, quote.Name(k.Value))
				name, ok := yamljson.KeyName(k) // 16, 0x10 and '16' are one key in JSON
				if !ok {
					name = k.Value
				}
				if seen[name] {
					errs = append(errs, path+": duplicate key")
					continue
				}
				seen[name] = true
				walk(v, path, level)
			}
		}
	}
	walk(root, "", 0)
	return errs
}

// nodeDepth is how many levels of sequences and mappings n holds, itself
// included, following aliases; memo keeps each node's answer, so that aliases of
// aliases are counted once each, and stops counting past inputcheck.MaxDepth.
func nodeDepth(n *yamlv3.Node, memo map[*yamlv3.Node]int) int {
	if d, ok := memo[n]; ok {
		return d
	}
	memo[n] = inputcheck.MaxDepth + 1 // while counting: a node that contains itself is too deep
	d := 0
	switch n.Kind {
	case yamlv3.AliasNode:
		if n.Alias != nil {
			d = nodeDepth(n.Alias, memo)
		}
	case yamlv3.DocumentNode, yamlv3.SequenceNode, yamlv3.MappingNode:
		for _, c := range n.Content {
			if d = max(d, nodeDepth(c, memo)); d > inputcheck.MaxDepth {
				break
			}
		}
		if n.Kind != yamlv3.DocumentNode {
			d++
		}
	}
	memo[n] = min(d, inputcheck.MaxDepth+1)
	return memo[n]
}

// fieldOf names the NodeConfig field a path is in: its first three segments
// (spec.containerd.baseRuntimeSpec), or "document".
func fieldOf(at string) string {
	if at == "" {
		return "document"
	}
	segs := strings.SplitN(at, ".", 4)
	return strings.Join(segs[:min(3, len(segs))], ".")
}
