package imdstest

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/eksboot/eksboot/internal/siminstance"
	"github.com/eksboot/eksboot/internal/testtools"
)

// parityCase is one entry of testdata/fake_aws_trees.json: an instance and
// the paths and bodies the parity tool's fake serves for it.
type parityCase struct {
	Case string            `json:"case"`
	IMDS json.RawMessage   `json:"imds"`
	Tree map[string]string `json:"tree"`
}

func loadParityCases(t *testing.T) []parityCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/fake_aws_trees.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []parityCase
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatalf("testdata/fake_aws_trees.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("testdata/fake_aws_trees.json has no cases")
	}
	return cases
}

func TestBuildTreeMatchesParityFake(t *testing.T) {
	for _, pc := range loadParityCases(t) {
		t.Run(pc.Case, func(t *testing.T) {
			var inst Instance
			if err := json.Unmarshal(pc.IMDS, &inst); err != nil {
				t.Fatalf("decode imds: %v", err)
			}
			got, err := buildTree(inst)
			if err != nil {
				t.Fatalf("buildTree: %v", err)
			}
			testtools.CompareTrees(t, got, pc.Tree)
		})
	}
}

func TestDefaultInstanceIsCase01(t *testing.T) {
	for _, pc := range loadParityCases(t) {
		if pc.Case != "01-m5large-usw2-vpc192" {
			continue
		}
		var want Instance
		if err := json.Unmarshal(pc.IMDS, &want); err != nil {
			t.Fatal(err)
		}
		if got := DefaultInstance(); !reflect.DeepEqual(got, want) {
			t.Errorf("DefaultInstance() = %+v\nwant %+v", got, want)
		}
		return
	}
	t.Fatal("case 01-m5large-usw2-vpc192 not in testdata")
}

func TestBuildTreeNeedsVPCCIDR(t *testing.T) {
	inst := DefaultInstance()
	inst.VPCIPv4CIDRBlocks = nil
	if _, err := buildTree(inst); err == nil {
		t.Fatal("buildTree without vpc-ipv4-cidr-blocks: want an error")
	}
	if _, err := NewServer(inst); err == nil {
		t.Fatal("NewServer without vpc-ipv4-cidr-blocks: want an error")
	}
}

// IdentityDocument with absent keys leaves exactly those out of the document
// the server serves.
func TestIdentityDocumentAbsent(t *testing.T) {
	inst := DefaultInstance()
	var full, without map[string]any
	if err := json.Unmarshal([]byte(siminstance.IdentityDocument(inst)), &full); err != nil {
		t.Fatal(err)
	}
	tree, err := buildTree(inst)
	if err != nil {
		t.Fatal(err)
	}
	if got := tree["latest/dynamic/instance-identity/document"]; got != siminstance.IdentityDocument(inst) {
		t.Errorf("served document %q, want IdentityDocument's", got)
	}
	if err := json.Unmarshal([]byte(siminstance.IdentityDocument(inst, "privateIp", "instanceId")), &without); err != nil {
		t.Fatal(err)
	}
	delete(full, "privateIp")
	delete(full, "instanceId")
	if !reflect.DeepEqual(without, full) {
		t.Errorf("document without privateIp and instanceId = %v, want %v", without, full)
	}
}
