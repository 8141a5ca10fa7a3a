package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestMainCommands(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"version", []string{"eksboot", "version"}, 0, "eksboot dev\n", ""},
		{"--version", []string{"eksboot", "--version"}, 0, "eksboot dev\n", ""},
		{"version takes no --json", []string{"eksboot", "version", "--json"}, 2, "", "eksboot version: unknown flag: --json (see --help)\n"},
		{"version takes no argument", []string{"eksboot", "version", "now"}, 2, "", `eksboot version: unexpected arguments ["now"]`},
		{"version output", []string{"eksboot", "version", "--output", "yaml"}, 2, "", `eksboot version: --output "yaml": want text or json`},
		{"no command", []string{"eksboot"}, 2, "", "Usage: eksboot COMMAND"},
		{"unknown command", []string{"eksboot", "join"}, 2, "", `unknown command "join" (want bootstrap, init, render, max-pods, doctor, version, completion, man, help; see eksboot help)`},
		{"help", []string{"eksboot", "help"}, 0, "\n  bootstrap     configure and start the kubelet", ""},
		{"bootstrap help", []string{"eksboot", "bootstrap", "--help"}, 0, "--b64-cluster-ca", ""},
		{"help of a command", []string{"eksboot", "help", "bootstrap"}, 0, "Usage: eksboot bootstrap [options] CLUSTER_NAME\n", ""},
		{"help of an unknown command", []string{"eksboot", "help", "join"}, 2, "", `eksboot help: unknown command "join"`},
		{"a flag value is not a help request", []string{"eksboot", "bootstrap", "--kubelet-extra-args", "--help", "c"}, 2, "", "--kubelet-extra-args: got the flag --help as its value"},
		{"completion wants a shell", []string{"eksboot", "completion"}, 2, "", "eksboot completion: want one shell: bash, zsh, fish\n"},
		{"completion of an unknown shell", []string{"eksboot", "completion", "tcsh"}, 2, "", `eksboot completion: shell "tcsh": want bash, zsh, fish`},
		{"bootstrap.sh name takes bootstrap.sh's command line", []string{"/etc/eks/bootstrap.sh", "-h"}, 0, "Usage: bootstrap.sh [options] CLUSTER_NAME", ""},
		{"bad flag", []string{"eksboot", "bootstrap", "--nope"}, 2, "", "eksboot bootstrap: unknown flag: --nope (see --help)\n"},
		{"bad value", []string{"bootstrap.sh", "c", "--ip-family", "ipv5", "--b64-cluster-ca", "eA==", "--apiserver-endpoint", "https://x.example.com", "--root", "/nonexistent-root"}, 2, "", `--ip-family "ipv5": want ipv4 or ipv6`},
		{"missing root", []string{"bootstrap.sh", "c", "--root", "/nonexistent-root"}, 2, "", "--root"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, &stdout, &stderr)
			if code != tc.wantCode || !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
				t.Errorf("Main(%q) = %d\nstdout %q\nstderr %q\nwant %d, stdout containing %q, stderr containing %q",
					tc.args, code, stdout.String(), stderr.String(), tc.wantCode, tc.wantStdout, tc.wantStderr)
			}
		})
	}
}

func TestJSONLogs(t *testing.T) {
	var b bytes.Buffer
	log, err := NewLogger("json", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("step done")
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["msg"] != "step done" || v["level"] != "info" || v["ts"] == nil {
		t.Errorf("json log line %q: %v", b.String(), err)
	}
	b.Reset()
	log, _ = NewLogger("console", &b)
	log.Info("step done")
	if strings.HasPrefix(b.String(), "20") || !strings.HasPrefix(b.String(), "INFO\t") {
		t.Errorf("console line %q: want no timestamp (journald adds it)", b.String())
	}
}
