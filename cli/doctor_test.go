package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestDoctorUsage: a bad flag value is one line naming the flag, exit 2, and
// nothing on stdout.
func TestDoctorUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--output", "yaml"}, `--output "yaml": want text or json`},
		{[]string{"--timeout", "0s"}, "--timeout 0s: want a positive duration"},
		{[]string{"--timeout", "soon"}, `invalid argument "soon" for "--timeout"`},
		{[]string{"--root", "/no/such/dir"}, "--root: root \"/no/such/dir\""},
		{[]string{"extra"}, `unexpected arguments ["extra"]`},
		{[]string{"--root", ""}, `--root "": want a directory`},
		{[]string{"--imds-endpoint", "ftp://x"}, "--imds-endpoint flag"},
		{[]string{"--no-such-flag"}, "unknown flag: --no-such-flag"},
	} {
		var stdout, stderr bytes.Buffer
		code := Main(append([]string{"eksboot", "doctor"}, tc.args...), &stdout, &stderr)
		if code != ExitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 || stdout.Len() != 0 {
			t.Errorf("doctor %v: exit %d, stderr %q, stdout %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), stdout.String(), tc.want)
		}
	}
	var stdout bytes.Buffer
	if code := Main([]string{"eksboot", "doctor", "--help"}, &stdout, &bytes.Buffer{}); code != ExitOK || !strings.Contains(stdout.String(), "--output") {
		t.Errorf("--help: exit %d\n%s", code, stdout.String())
	}
}

// TestDoctorOnABrokenNode: an empty root whose IMDS refuses tokens fails (exit 1);
// the JSON report has every field the README documents, the text one the checklist.
func TestDoctorOnABrokenNode(t *testing.T) {
	srv, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	srv.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403})
	dir := t.TempDir()
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path="+filepath.Join(dir, "no-bus"))

	var stdout, stderr bytes.Buffer
	code := Main([]string{"eksboot", "doctor", "--root", dir, "--imds-endpoint", srv.URL(), "--output", "json", "--timeout", "20s"}, &stdout, &stderr)
	if code != ExitFailure {
		t.Errorf("exit %d, want 1\nstdout %s\nstderr %s", code, stdout.String(), stderr.String())
	}
	var r struct {
		Started string `json:"started"`
		TookMS  *int64 `json:"tookMS"`
		Checks  []struct {
			Group, Check, Status, Evidence, Fix string
		} `json:"checks"`
		Summary struct{ OK, Warn, Fail int } `json:"summary"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout.String())
	}
	statuses := map[string]string{}
	for _, c := range r.Checks {
		statuses[c.Check] = c.Status
		if c.Group == "" || c.Evidence == "" || c.Status != "ok" && c.Fix == "" && c.Status != "warn" {
			t.Errorf("check %+v lacks a field", c)
		}
	}
	if statuses["imds.token"] != "FAIL" || statuses["api.kubeconfig"] != "FAIL" || statuses["eksboot.last-run"] != "warn" ||
		r.Summary.Fail == 0 || r.Started == "" || r.TookMS == nil {
		t.Errorf("report %+v", r)
	}
	if strings.Contains(stdout.String(), imdstest.Token) {
		t.Error("the report shows the IMDS token")
	}

	stdout.Reset()
	code = Main([]string{"eksboot", "doctor", "--root", dir, "--imds-endpoint", srv.URL()}, &stdout, &stderr)
	out := stdout.String()
	if code != ExitFailure || !strings.Contains(out, "\nIMDS\n  FAIL  imds.token") || !strings.Contains(out, "fix: Turn it on") ||
		!strings.Contains(out, " FAIL (") {
		t.Errorf("text report, exit %d:\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "var")); !os.IsNotExist(err) {
		t.Errorf("doctor wrote into the root: %v", err)
	}
}
