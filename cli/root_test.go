package cli

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestEmptyRootIsAnError: --root "" (an empty variable) would put the node's files
// under the current directory, from / the real node's. Each command that writes
// refuses it with exit status 2 and writes nothing, in a current directory that
// would show any file.
func TestEmptyRootIsAnError(t *testing.T) {
	node := []string{
		"c", "--b64-cluster-ca", "eA==", "--apiserver-endpoint", "https://x.example.com", "--no-restart",
		"--kubelet-version", "1.30.0", "--imds-endpoint", "http://127.0.0.1:9",
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"bootstrap", append([]string{"eksboot", "bootstrap", "--root", ""}, node...), `--root "": want a directory`},
		{"bootstrap, equals form", append([]string{"eksboot", "bootstrap", "--root="}, node...), `--root "": want a directory`},
		{"bootstrap.sh", append([]string{"/etc/eks/bootstrap.sh", "--root", ""}, node...), `--root "": want a directory`},
		{"bootstrap, unquoted empty variable", append([]string{"eksboot", "bootstrap", "--root", "--dry-run"}, node...), "--root: got the flag --dry-run as its value"},
		{"init", []string{"eksboot", "init", "--root", "", "--no-restart", "--imds-endpoint", "http://127.0.0.1:9"}, `--root "": want a directory`},
		{"init, config phase", []string{"eksboot", "init", "--phase", "config", "--root="}, `--root "": want a directory`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cwd := t.TempDir()
			t.Chdir(cwd)
			var stdout, stderr bytes.Buffer
			code := Main(tc.args, &stdout, &stderr)
			if code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 and --root named", code, stderr.String())
			}
			if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
				t.Errorf("wrote %d entries into the current directory", len(entries))
			}
		})
	}
}
