package userdata

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEarlyKubeletSamples: of the samples, only those whose parts are all NodeConfigs
// let the kubelet start before cloud-final; every one with a script, a cloud-config or
// a boothook keeps it after cloud-final, naming that part.
func TestEarlyKubeletSamples(t *testing.T) {
	want := map[string]string{
		"01": "part 1 (text/x-shellscript) is a script that cloud-final runs",
		"02": "part 1 (text/x-shellscript) is a script that cloud-final runs (and 2 more parts that cloud-init runs)",
		"03": "part 1 (text/x-shellscript) is a script that cloud-final runs (and 2 more parts that cloud-init runs)",
		"04": "part 1 (text/cloud-config) is cloud-config, whose modules run in every stage up to cloud-final (bootcmd, write_files, runcmd, packages)",
		"05": "part 1 (text/x-shellscript) is a script that cloud-final runs",
		"06": "part 1 (text/x-shellscript) is a script that cloud-final runs",
		"07": "part 1 (text/x-shellscript) is a script that cloud-final runs (and 1 more parts that cloud-init runs)",
		"08": "early: the user data has only NodeConfig parts (1), which cloud-init does not run",
		"09": "part 2 (text/x-shellscript) is a script that cloud-final runs",
		"10": "early: the user data has only NodeConfig parts (1), which cloud-init does not run",
		"11": "part 3 (text/x-shellscript) is a script that cloud-final runs",
		"12": "part 1 (text/x-shellscript) is a script that cloud-final runs",
		"13": "early: the user data has only NodeConfig parts (2), which cloud-init does not run",
		"14": "early: the user data has only NodeConfig parts (1), which cloud-init does not run",
		"15": "part 1 (text/cloud-boothook) is a boothook, which cloud-init's init stage runs at every boot (and 1 more parts that cloud-init runs)",
		"16": "part 1 (text/x-shellscript) is a script that cloud-final runs",
	}
	files, _ := filepath.Glob(filepath.Join(samples, "*.userdata*"))
	if len(files) != len(want) {
		t.Fatalf("%d samples, want %d", len(files), len(want))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".gz") {
			b, err = Gunzip(b, MaxDecoded)
			if err != nil {
				t.Fatal(err)
			}
		}
		parts, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		early, why := EarlyKubelet(parts)
		got := why
		if early {
			got = "early: " + why
		}
		if w := want[filepath.Base(f)[:2]]; got != w {
			t.Errorf("%s:\n got %q\nwant %q", filepath.Base(f), got, w)
		}
	}
}

// TestEarlyKubeletParts: each part type that forbids the early start, and the
// NodeConfigs cloud-init would read as one of its own types by their first line.
func TestEarlyKubeletParts(t *testing.T) {
	const nc = "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {}\n"
	mime := func(parts ...string) string {
		s := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n"
		for _, p := range parts {
			s += "--B\n" + p + "\n"
		}
		return s + "--B--\n"
	}
	for _, tc := range []struct{ name, userData, want string }{
		{"no user data", "", "early: no user data: cloud-init runs nothing of the user's"},
		{"plain NodeConfig", nc, "early: the user data has only NodeConfig parts (1), which cloud-init does not run"},
		{
			"NodeConfig part starting with a script's line", mime("Content-Type: application/node.eks.aws\n\n#!/bin/sh\n" + nc),
			"part 1 (application/node.eks.aws) is a NodeConfig whose first line cloud-init reads as text/x-shellscript",
		},
		{
			"an include that names NodeConfig (guessed a NodeConfig)", "#include\nhttps://example.com/x # kind: NodeConfig\n",
			"part 1 (application/node.eks.aws) is a NodeConfig whose first line cloud-init reads as text/x-include-url",
		},
		{
			"upper case, after spaces and a separator", "\x1c  #Cloud-Config\n# kind: NodeConfig\n",
			"part 1 (application/node.eks.aws) is a NodeConfig whose first line cloud-init reads as text/cloud-config",
		},
		{
			"a script", mime("Content-Type: application/node.eks.aws\n\n"+nc, "Content-Type: text/x-shellscript\n\n#!/bin/sh\ntrue"),
			"part 2 (text/x-shellscript) is a script that cloud-final runs",
		},
		{
			"a script per boot", mime("Content-Type: text/x-shellscript-per-boot\n\n#!/bin/sh\ntrue"),
			"part 1 (text/x-shellscript-per-boot) is a script that cloud-final runs at every boot",
		},
		{
			"text/plain", mime("Content-Type: application/node.eks.aws\n\n"+nc, "Content-Type: text/plain\n\nhello"),
			"part 2 (text/plain) is text/plain, which cloud-init types by its first line and may run",
		},
		{
			"a part handler", mime("Content-Type: text/part-handler\n\ndef list_types(): return []"),
			"part 1 (text/part-handler) is a part handler: code that cloud-init runs on the other parts",
		},
		{
			"an include", mime("Content-Type: text/x-include-once-url\n\nhttps://example.com/x"),
			"part 1 (text/x-include-once-url) is an include: cloud-init fetches more user data, of any type",
		},
		{
			"jinja", mime("Content-Type: text/jinja2\n\n## template: jinja\n#cloud-config"),
			"part 1 (text/jinja2) is a jinja template that renders to cloud-config or a script",
		},
		{
			"an unknown type", mime("Content-Type: application/json\n\n{}"),
			"part 1 (application/json) is a type eksboot does not know, which a part handler of the image may run",
		},
		{
			"gzip typed", mime("Content-Type: application/x-gzip\nContent-Transfer-Encoding: base64\n\n" + base64.StdEncoding.EncodeToString(gz(t, []byte(nc)))),
			"part 1 (application/x-gzip) is a type eksboot does not know, which a part handler of the image may run",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var parts []Part // as init: no user data, no parts
			if tc.userData != "" {
				var err error
				if parts, err = Parse([]byte(tc.userData)); err != nil {
					t.Fatal(err)
				}
			}
			early, why := EarlyKubelet(parts)
			got := why
			if early {
				got = "early: " + why
			}
			if got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCloudInitMark: cloud-init's first-line types, longest first.
func TestCloudInitMark(t *testing.T) {
	for body, want := range map[string]string{
		"#cloud-config\n":             TypeCloudConfig,
		"#cloud-config-archive\n":     "text/cloud-config-archive",
		"#include-once\n":             "text/x-include-once-url",
		"#include\n":                  "text/x-include-url",
		"\n\t #!/bin/bash\n":          TypeShellScript,
		"## Template: Jinja\n":        "text/jinja2",
		"text/x-shellscript-per-boot": "text/x-shellscript-per-boot",
		"---\nkind: NodeConfig\n":     "",
		"# a comment\n#!/bin/sh\n":    "",
		"":                            "",
	} {
		if got := CloudInitMark([]byte(body)); got != want {
			t.Errorf("CloudInitMark(%q) = %q, want %q", body, got, want)
		}
	}
}
