package yamljson

import (
	"bytes"
	"errors"
	"regexp"
	"testing"

	"sigs.k8s.io/yaml"
)

// seeds are NodeConfig user data and the corners of YAML 1.1 that differ from 1.2.
var seeds = []string{
	"apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: my-cluster\n    apiServerEndpoint: https://example.com\n    certificateAuthority: Y2E=\n    cidr: 10.100.0.0/16\n  kubelet:\n    config:\n      maxPods: 110\n      clusterDNS: [10.100.0.10]\n    flags: [\"--node-labels=a=b\"]\n",
	"a: yes\nb: on\nc: y\nd: No\ne: OFF\nf: ~\ng: Null\nh:\n",
	"a: 0777\nb: 0x1F\nc: 0o17\nd: 0b101\ne: -0b11\nf: 1_000\ng: +12\nh: 1e3\ni: .5\nj: -.inf\nk: 12.\nl: 9223372036854775808\nm: 18446744073709551616\nn: 1.5e400\n",
	"a: '0777'\nb: \"yes\"\nc: |\n  yes\nd: >\n  12\n",
	"a: !!str 12\nb: !!int '12'\nc: !!float 1\nd: !!bool yes\ne: !!binary aGVsbG8=\nf: !custom 12\nh: !!null ''\ni: !!timestamp 2001-12-14\n",
	"b: !!int abc\n",
	"1: a\n2.5: b\ntrue: c\n0x10: d\n",
	"~: a\n",
	"? [a]\n: b\n",
	"base: &b {x: 1, y: 2}\nover:\n  <<: *b\n  y: 3\nunder:\n  y: 3\n  <<: *b\nlist:\n  <<: [{x: 1}, {x: 2, z: 3}]\nquoted:\n  '<<': 1\n",
	"a: &a [1, *a]\n",
	"a: 1\na: 2\n",
	"a: 2001-12-14\nb: 2001-12-14t21:59:43.10-05:00\n",
	"",
	"# only a comment\n",
	"--- a\n--- b\n",
	"- a\n- {b: c}\n- [d, e]\n",
	"a: [\n",
	"a: b: c\n",
	"a: .nan\n",
	"<<: {a: 1}\n<<: 3\n",
}

// TestSeedsMatchSigsYAML: the seeds convert as sigs.k8s.io/yaml converts them.
func TestSeedsMatchSigsYAML(t *testing.T) {
	for _, s := range seeds {
		compare(t, []byte(s))
	}
}

func compare(t *testing.T, y []byte) {
	t.Helper()
	got, err := ToJSON(y)
	if errors.Is(err, errKeyCollision) {
		return // sigs.k8s.io/yaml keeps one of the keys at random
	}
	want, wantErr := yaml.YAMLToJSON(y)
	var parseErr *ParseError
	if wantErr == nil && errors.As(err, &parseErr) {
		t.Logf("v3 refuses what v2 reads (%s): %q", want, y)
		return
	}
	switch {
	case wantErr != nil && err == nil:
		t.Fatalf("ToJSON(%q) = %s; sigs.k8s.io/yaml: error %v", y, got, wantErr)
	case wantErr == nil && err != nil:
		t.Fatalf("ToJSON(%q): error %v; sigs.k8s.io/yaml: %s", y, err, want)
	case err == nil && !bytes.Equal(got, want):
		t.Fatalf("ToJSON(%q) = %s; sigs.k8s.io/yaml: %s", y, got, want)
	}
}

// nonSpecificTag finds the non-specific tag "!" (or "!<!>"), which v3's node tree
// does not keep (it resolves the scalar as if untagged, where v2 left it a string):
// the one known difference, documented on ToJSON.
var nonSpecificTag = regexp.MustCompile(`!(<!>)?([\s,\[\]{}]|$)`)

// FuzzToJSON holds ToJSON to sigs.k8s.io/yaml's YAMLToJSON.
func FuzzToJSON(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, y []byte) {
		if len(y) > 4096 || nonSpecificTag.Match(y) {
			return
		}
		compare(t, y)
	})
}
