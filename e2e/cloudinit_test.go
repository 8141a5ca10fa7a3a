//go:build e2e

package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/userdata"
)

// cloudInitTypes is the node root's cloud-init as an oracle, run in the root
// without booting it: the types its user-data processor gives every part of each
// user data (after typing text/plain, shell scripts and gzip by their first line
// and following archives), the types it has handlers for, and the type it gives
// each body by its first line (type_from_starts_with).
const cloudInitTypes = `import base64, json, sys
from cloudinit import features, helpers, user_data
from cloudinit.handlers import INCLUSION_TYPES_MAP, type_from_starts_with
features.ERROR_ON_USER_DATA_FAILURE = False  # an include that fails is logged, as on a node
req = json.load(sys.stdin)
paths = helpers.Paths({"cloud_dir": "/tmp/e2e-cloud", "run_dir": "/tmp/e2e-run"})
out = {"handled": sorted(set(INCLUSION_TYPES_MAP.values())), "userData": [], "marks": []}
for b in req["userData"]:
    msg = user_data.UserDataProcessor(paths).process(base64.b64decode(b))
    out["userData"].append([p.get_content_type() for p in msg.walk() if not p.is_multipart()])
for b in req["bodies"]:
    out["marks"].append(type_from_starts_with(base64.b64decode(b)) or "")
json.dump(out, sys.stdout)
`

// TestCloudInitAgreesWithEarlyKubelet holds userdata's rule to the real cloud-init
// of the node root (Debian's 22.4.2): for every sample and each edge case, when
// userdata.EarlyKubelet lets the kubelet start before cloud-final, cloud-init finds
// no part it has a handler for; and userdata.CloudInitMark types a first line as
// cloud-init does (eksboot also knows #upstart-job, which this release dropped).
// Includes point at a closed loopback port: nothing leaves the machine.
func TestCloudInitAgreesWithEarlyKubelet(t *testing.T) {
	bl := prepare(t)
	b := newBox(t, "e2e-cloud-init-oracle", bl.base)

	var corpus []string
	files, _ := filepath.Glob(filepath.Join(bl.repo, "testdata/userdata", "*.userdata*"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		corpus = append(corpus, string(raw))
	}
	const nc = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"
	mime := func(parts ...string) string {
		s := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n"
		for _, p := range parts {
			s += "--B\n" + p + "\n"
		}
		return s + "--B--\n"
	}
	corpus = append(corpus,
		nc,
		"---\n"+nc,
		mime("Content-Type: application/node.eks.aws\n\n"+nc),
		mime("Content-Type: application/node.eks.aws\n\n#!/bin/sh\n"+nc),
		mime("Content-Type: text/plain\n\n#!/bin/sh\necho hi\n"),
		mime("Content-Type: text/plain\n\nhello\n"),
		mime("Content-Type: text/x-shellscript\n\n#cloud-config\nruncmd: [true]\n"),
		mime("Content-Type: text/x-shellscript-per-boot\n\n#!/bin/sh\ntrue\n"),
		mime("Content-Type: application/json\n\n{}\n"),
		mime("Content-Type: text/x-include-url\n\nhttp://127.0.0.1:9/x\n"),
		"#include\nhttp://127.0.0.1:9/x # kind: NodeConfig\n",
		"\x1c  #Cloud-Config\n# kind: NodeConfig\n",
		"## template: jinja\n#cloud-config\n# kind: NodeConfig\n",
		"#cloud-boothook\n#!/bin/sh\ntrue\n",
		"",
	)
	bodies := []string{
		"#!/bin/sh", "  \n\t#CLOUD-CONFIG", "#cloud-config-archive", "#include-once", "#include", "#part-handler",
		"#cloud-boothook", "## template: jinja", "#cloud-config-jsonp", "text/x-shellscript-per-boot", "---\nkind: NodeConfig",
		"# a comment\n#!/bin/sh", "\x1c#!/bin/sh", "\u00a0#!/bin/sh", "\u2028#cloud-config", "", "#upstart-job",
	}

	req := map[string][]string{}
	for _, u := range corpus {
		req["userData"] = append(req["userData"], base64.StdEncoding.EncodeToString([]byte(u)))
	}
	for _, body := range bodies {
		req["bodies"] = append(req["bodies"], base64.StdEncoding.EncodeToString([]byte(body)))
	}
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	b.write("tmp/e2e-cloud-init-types.py", 0o644, cloudInitTypes)
	cmd := exec.Command("chroot", b.root, "env", "PYTHONDONTWRITEBYTECODE=1", "python3", "/tmp/e2e-cloud-init-types.py")
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cloud-init in the node root: %v\n%s", err, stderr.String())
	}
	var got struct {
		Handled  []string   `json:"handled"`
		UserData [][]string `json:"userData"`
		Marks    []string   `json:"marks"`
	}
	if err := json.Unmarshal(out, &got); err != nil || len(got.UserData) != len(corpus) || len(got.Marks) != len(bodies) {
		t.Fatalf("cloud-init's answer: %v\n%s\n%s", err, out, stderr.String())
	}
	early := 0
	for i, u := range corpus {
		var parts []userdata.Part
		if u != "" {
			if parts, err = userdata.Parse([]byte(u)); err != nil {
				t.Fatalf("corpus %d: %v", i, err)
			}
		}
		ok, why := userdata.EarlyKubelet(parts)
		var handled []string
		for _, typ := range got.UserData[i] {
			if slices.Contains(got.Handled, typ) {
				handled = append(handled, typ)
			}
		}
		if ok {
			early++
			if len(handled) > 0 {
				t.Errorf("user data %d (%.60q): eksboot starts the kubelet early (%s), but cloud-init handles %v", i, u, why, handled)
			}
		}
		t.Logf("user data %d: cloud-init %v; eksboot early=%v: %s", i, got.UserData[i], ok, why)
	}
	if early < 5 {
		t.Errorf("only %d user data of the corpus start the kubelet early: the oracle checks too little", early)
	}
	for i, body := range bodies {
		mine := userdata.CloudInitMark([]byte(body))
		upstart := strings.HasPrefix(body, "#upstart-job") && got.Marks[i] == "" // eksboot knows it, this release does not
		if mine != got.Marks[i] && !upstart {
			t.Errorf("first line %q: eksboot reads it as %q, cloud-init as %q", body, mine, got.Marks[i])
		}
	}
}
