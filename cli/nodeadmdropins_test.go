package cli

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestInitReadsNodeadmDropIns: /etc/eks/nodeadm.d is read as nodeadm reads it
// (awslabs/amazon-eks-ami nodeadm/internal/configprovider/file.go and mime.go at
// 81fec2e8, and nodeadm-run.service's --config-source imds://user-data --config-source
// file:///etc/eks/nodeadm.d/): the user data first, then the folder's files whose
// names end in .yaml, .yml or .json in any case, in name order (os.ReadDir),
// folders and other names skipped; a file is one NodeConfig (YAML or JSON) or a
// MIME multipart document whose NodeConfig parts count and other parts do not;
// NodeConfigs merge as nodeadm merges them (a later scalar wins, maps merge key by
// key, kubelet.flags append). eksboot's own /etc/eks/eksboot.d comes after
// nodeadm's and wins. Both phases read them.
func TestInitReadsNodeadmDropIns(t *testing.T) {
	offline(t)
	part := func(spec string) string { return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n" + spec }
	files := map[string]string{
		// The user data says maxPods 110, shutdownGracePeriod 30s and two flags.
		"etc/eks/nodeadm.d/10-labels.yaml": part("  kubelet:\n    flags: [--node-labels=team=a]\n    config: {maxPods: 58}\n"),
		"etc/eks/nodeadm.d/20-gc.JSON": `{"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": {"kubelet": ` +
			`{"config": {"imageGCHighThresholdPercent": 85, "evictionHard": {"memory.available": "200Mi"}}}}}`,
		"etc/eks/nodeadm.d/30-mime.yml": "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: text/x-shellscript\n\n#!/bin/bash\necho not read\n" +
			"--//\nContent-Type: application/node.eks.aws\n\n" + part("  kubelet:\n    config: {shutdownGracePeriod: 45s}\n") + "--//--\n",
		"etc/eks/nodeadm.d/40-not-read.yaml.bak": "not YAML: [",
		"etc/eks/nodeadm.d/README.md":            "not YAML: [",
		"etc/eks/nodeadm.d/50-dir.yaml/x.yaml":   "not YAML: [",
		"etc/eks/eksboot.d/90-own.yaml":          part("  kubelet:\n    config: {imageGCHighThresholdPercent: 90}\n"),
	}
	inst := imdstest.DefaultInstance()
	inst.UserData = nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata")
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	for _, phase := range []string{"config", "run"} {
		t.Run(phase, func(t *testing.T) {
			dir := t.TempDir()
			for p, body := range files {
				must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
				must(t, os.WriteFile(filepath.Join(dir, p), []byte(body), 0o644))
			}
			var stderr bytes.Buffer
			args := []string{"eksboot", "init", "--phase", phase, "--root", dir, "--no-restart", "--kubelet-version", "1.35.2", "--image-profile", "al2023", "--imds-endpoint", srv.URL()}
			if code := Main(args, io.Discard, &stderr); code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr.String())
			}
			for _, want := range []string{"/etc/eks/nodeadm.d/10-labels.yaml", "/etc/eks/nodeadm.d/20-gc.JSON", "/etc/eks/nodeadm.d/30-mime.yml part 2 (application/node.eks.aws)", "/etc/eks/eksboot.d/90-own.yaml"} {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("the log does not name %s as a source:\n%s", want, stderr.String())
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf"))
			must(t, err)
			var got map[string]any
			must(t, json.Unmarshal(b, &got))
			if got["maxPods"] != 58.0 || got["shutdownGracePeriod"] != "45s" || got["imageGCHighThresholdPercent"] != 90.0 {
				t.Errorf("maxPods %v (want 58: nodeadm.d over the user data), shutdownGracePeriod %v (45s: the MIME file's part), imageGCHighThresholdPercent %v (90: eksboot.d over nodeadm.d)\n%s",
					got["maxPods"], got["shutdownGracePeriod"], got["imageGCHighThresholdPercent"], b)
			}
			if e, _ := got["evictionHard"].(map[string]any); e["memory.available"] != "200Mi" {
				t.Errorf("evictionHard %v", got["evictionHard"])
			}
			extra, err := os.ReadFile(filepath.Join(dir, "etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf"))
			must(t, err)
			if !strings.Contains(string(extra), "--node-labels=workload=general,env=prod --register-with-taints=env=prod:PreferNoSchedule --node-labels=team=a'") {
				t.Errorf("kubelet.flags: want the user data's, then the drop-in's:\n%s", extra)
			}
		})
	}

	// A MIME file without a NodeConfig part fails the run, as it fails nodeadm's
	// ("could not find NodeConfig within UserData").
	dir := t.TempDir()
	p := filepath.Join(dir, "etc/eks/nodeadm.d/10-script.yaml")
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte("Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: text/x-shellscript\n\n#!/bin/bash\n--B--\n"), 0o644))
	var stderr bytes.Buffer
	code := Main([]string{"eksboot", "init", "--root", dir, "--no-restart", "--kubelet-version", "1.35.2", "--imds-endpoint", srv.URL()}, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "/etc/eks/nodeadm.d/10-script.yaml: a MIME multipart document with no NodeConfig part") {
		t.Errorf("exit %d\n%s", code, stderr.String())
	}
	if tree, _ := readTree(dir); len(tree) != 1 {
		t.Errorf("wrote %v", keys(tree))
	}
}
