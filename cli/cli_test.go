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
		{"no command", []string{"eksboot"}, 2, "", "Usage: eksboot COMMAND"},
		{"unknown command", []string{"eksboot", "join"}, 2, "", `unknown command "join"`},
		{"help", []string{"eksboot", "help"}, 0, "bootstrap [options] CLUSTER_NAME", ""},
		{"bootstrap help", []string{"eksboot", "bootstrap", "--help"}, 0, "--b64-cluster-ca", ""},
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
	log, err := newLogger("json", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("step done")
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil || v["msg"] != "step done" || v["level"] != "info" || v["ts"] == nil {
		t.Errorf("json log line %q: %v", b.String(), err)
	}
	b.Reset()
	log, _ = newLogger("console", &b)
	log.Info("step done")
	if strings.HasPrefix(b.String(), "20") || !strings.HasPrefix(b.String(), "INFO\t") {
		t.Errorf("console line %q: want no timestamp (journald adds it)", b.String())
	}
}
