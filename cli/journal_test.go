package cli

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/testtools"
	"github.com/eksboot/eksboot/systemd/systemdtest"
)

// mainEnv makes the test binary run Main instead of the tests, so that a unit of the
// systemd harness can run eksboot (TestJournalPriorities).
const mainEnv = "EKSBOOT_CLI_TEST_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(mainEnv) == "1" {
		os.Exit(Main(append([]string{"eksboot"}, os.Args[1:]...), os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// journalUnits are the harness units of TestJournalPriorities: a journald of the
// harness's own (its sockets on the harness's private /run/systemd, its files in a
// folder of the test: /var/log is hidden so it never writes the machine's journal),
// and eksboot bootstrap runs whose standard error is the journal, as under
// eksboot-run.service: one with the default --log-format (the journal, found through
// JOURNAL_STREAM), one with --log-format journal and its standard error thrown away.
// Each run writes its PID (the shell's, which execs eksboot) to pidDir/UNIT.
func journalUnits(journalDir, pidDir, bin string, args []string) map[string]string {
	run := func(unit, extra, stderr string) string {
		return "[Unit]\nRequires=test-journald.service\nAfter=test-journald.service\n\n[Service]\nType=oneshot\n" +
			"Environment=" + mainEnv + "=1\nStandardOutput=null\nStandardError=" + stderr + "\n" +
			"ExecStart=/bin/sh -c 'echo $$$$ >" + filepath.Join(pidDir, unit) + " && exec " + bin + " bootstrap " + strings.Join(append(args, extra), " ") + "'\n"
	}
	return map[string]string{
		"test-journald.service": "[Service]\nType=notify\nExecStart=/lib/systemd/systemd-journald\n" +
			"TemporaryFileSystem=/var/log\nBindPaths=" + journalDir + ":/run/log/journal\n",
		"eksboot-stream.service":  run("eksboot-stream.service", "--log-format=console", "journal"),
		"eksboot-journal.service": run("eksboot-journal.service", "--log-format=journal", "null"),
	}
}

// TestJournalPriorities runs eksboot bootstrap as units of the real systemd of the
// test harness, logging to a real journald, and reads the journal back with
// journalctl -o json: each warning is stored at priority 4 (warning), each info
// line at 6, with the step and its duration as EKSBOOT_STEP and EKSBOOT_TOOK, and
// `journalctl -p warning` shows the warnings and nothing else. Through the stream
// every line was stored at priority 6.
func TestJournalPriorities(t *testing.T) {
	if _, err := os.Stat("/lib/systemd/systemd-journald"); err != nil && os.Getenv(systemdtest.RequireEnv) != "1" {
		t.Skip("systemd-journald is not installed")
	}
	testtools.Require(t, "journalctl")
	metadata, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	defer metadata.Close()
	dir := t.TempDir()
	journalDir := filepath.Join(dir, "journal")
	unitDir := filepath.Join(dir, "units")
	for _, d := range []string{journalDir, unitDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// A warning the run always gives: a --use-max-pods that is neither true nor
	// false. --no-restart: systemd is the harness's, the run only writes its root.
	args := []string{
		"journal-test", "--b64-cluster-ca", base64.StdEncoding.EncodeToString(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: testtools.SelfSignedCA(t)})),
		"--apiserver-endpoint", "https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com",
		"--imds-endpoint", metadata.URL(), "--kubelet-version", "1.32.9", "--use-max-pods", "TRUE", "--no-restart",
	}
	for _, u := range []string{"stream", "journal"} {
		root := filepath.Join(dir, "root-"+u)
		if err := os.MkdirAll(root, 0o755); err != nil {
			t.Fatal(err)
		}
		args := append(append([]string(nil), args...), "--root", root)
		for name, text := range journalUnits(journalDir, dir, bin, args) {
			if strings.HasPrefix(name, "eksboot-"+u) || name == "test-journald.service" {
				if err := os.WriteFile(filepath.Join(unitDir, name), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	h := systemdtest.Start(t, unitDir)
	for _, u := range []string{"eksboot-stream.service", "eksboot-journal.service"} {
		if out, err := h.Systemctl("start", u); err != nil {
			st, _ := h.Systemctl("status", "--no-pager", u)
			t.Fatalf("start %s: %v\n%s\n%s", u, err, out, st)
		}
	}
	for _, u := range []string{"eksboot-stream.service", "eksboot-journal.service"} {
		pid, err := os.ReadFile(filepath.Join(dir, u))
		if err != nil {
			t.Fatal(err)
		}
		entries := waitForEntries(t, journalDir, strings.TrimSpace(string(pid)), "complete")
		checkPriorities(t, u, entries)
	}
	// What an operator types, for the record.
	out, err := exec.Command("journalctl", "-D", journalDir, "--no-pager", "-p", "warning", "-t", "eksboot", "-o", "short-monotonic").CombinedOutput()
	t.Logf("journalctl -p warning:\n%s", out)
	if err != nil || !bytes.Contains(out, []byte(`--use-max-pods "TRUE"`)) || bytes.Contains(out, []byte("step done")) {
		t.Errorf("journalctl -p warning: %v: want the --use-max-pods warnings and no info line:\n%s", err, out)
	}
}

// journalEntry is an entry of journalctl -o json: every field as a string (binary
// fields, arrays in JSON, do not occur here).
type journalEntry map[string]any

func (e journalEntry) get(k string) string { s, _ := e[k].(string); return s }

// waitForEntries reads the journal until the process pid has logged msg (journald
// writes each entry at once, but the test reads another process's files).
func waitForEntries(t *testing.T, dir, pid, msg string) []journalEntry {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := exec.Command("journalctl", "-D", dir, "--no-pager", "-o", "json", "_PID="+pid).Output()
		var entries []journalEntry
		done := false
		s := bufio.NewScanner(bytes.NewReader(out))
		s.Buffer(nil, 1<<20)
		for s.Scan() {
			var e journalEntry
			if json.Unmarshal(s.Bytes(), &e) == nil {
				entries = append(entries, e)
				done = done || strings.HasPrefix(e.get("MESSAGE"), msg)
			}
		}
		if done {
			return entries
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q from PID %s in the journal after 20s (%v):\n%s", msg, pid, err, out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkPriorities checks the entries of one run.
func checkPriorities(t *testing.T, unit string, entries []journalEntry) {
	t.Helper()
	var warned, stepped bool
	for _, e := range entries {
		msg, pri := e.get("MESSAGE"), e.get("PRIORITY")
		if e.get("_TRANSPORT") != "journal" {
			t.Errorf("%s: entry through %q, want the native protocol: %q", unit, e.get("_TRANSPORT"), msg)
		}
		if e.get("SYSLOG_IDENTIFIER") != "eksboot" {
			t.Errorf("%s: SYSLOG_IDENTIFIER %q", unit, e.get("SYSLOG_IDENTIFIER"))
		}
		switch {
		case strings.Contains(msg, `--use-max-pods "TRUE"`):
			warned = true
			if pri != "4" {
				t.Errorf("%s: warning %q at priority %s, want 4", unit, msg, pri)
			}
		case strings.HasPrefix(msg, "step done"):
			stepped = true
			if pri != "6" || e.get("EKSBOOT_STEP") == "" || e.get("EKSBOOT_TOOK") == "" {
				t.Errorf("%s: step entry at priority %s, step %q, took %q: %q", unit, pri, e.get("EKSBOOT_STEP"), e.get("EKSBOOT_TOOK"), msg)
			}
		case pri != "6":
			t.Errorf("%s: %q at priority %s, want 6", unit, msg, pri)
		}
	}
	if !warned || !stepped {
		t.Errorf("%s: warning logged %v, step logged %v, in %d entries: %s", unit, warned, stepped, len(entries), fmt.Sprint(entries))
	}
}
