package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"go.uber.org/zap"
)

// sent is one entry a journalCore sent.
type sent struct {
	msg  string
	pri  journal.Priority
	vars map[string]string
}

// TestJournalCorePrioritiesAndFields: each level is its syslog priority, the fields
// are journal fields (step EKSBOOT_STEP, took EKSBOOT_TOOK, unit UNIT, camelCase
// keys in upper snake case) and MESSAGE is the console line without its level.
func TestJournalCorePrioritiesAndFields(t *testing.T) {
	var got []sent
	send := func(msg string, pri journal.Priority, vars map[string]string) error {
		got = append(got, sent{msg, pri, vars})
		return nil
	}
	log := zap.New(newJournalCore(send, nil)).Named("eksboot")
	log.Debug("step started", zap.String("step", "facts")) // below info: not sent
	log.Info("step done", zap.String("step", "facts"), zap.Duration("took", 1500*time.Millisecond))
	log.With(zap.String("imageProfile", "al2023")).Warn("max pods: 110", zap.String("unit", "kubelet.service"), zap.Strings("tried", []string{"table", "ec2"}))
	log.Error("step failed", zap.String("step", "restart"), zap.Error(errors.New("job failed")))
	want := []sent{
		{"step done\t{\"step\": \"facts\", \"took\": \"1.5s\"}", journal.PriInfo, map[string]string{"EKSBOOT_STEP": "facts", "EKSBOOT_TOOK": "1.5s", "SYSLOG_IDENTIFIER": "eksboot"}},
		{
			"max pods: 110\t{\"imageProfile\": \"al2023\", \"unit\": \"kubelet.service\", \"tried\": [\"table\", \"ec2\"]}", journal.PriWarning,
			map[string]string{"EKSBOOT_IMAGE_PROFILE": "al2023", "UNIT": "kubelet.service", "EKSBOOT_TRIED": `["table","ec2"]`, "SYSLOG_IDENTIFIER": "eksboot"},
		},
		{"step failed\t{\"step\": \"restart\", \"error\": \"job failed\"}", journal.PriErr, map[string]string{"EKSBOOT_STEP": "restart", "EKSBOOT_ERROR": "job failed", "SYSLOG_IDENTIFIER": "eksboot"}},
	}
	if len(got) != len(want) {
		t.Fatalf("sent %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i].msg != want[i].msg || got[i].pri != want[i].pri || !equalMaps(got[i].vars, want[i].vars) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

// TestJournalCoreFallsBack: an entry the journal refuses is written as a console
// line instead of being lost.
func TestJournalCoreFallsBack(t *testing.T) {
	var b bytes.Buffer
	send := func(string, journal.Priority, map[string]string) error { return errors.New("no journal") }
	log := zap.New(newJournalCore(send, &b)).Named("eksboot")
	log.Warn("fallback", zap.String("step", "facts"))
	if got := b.String(); got != "WARN\teksboot\tfallback\t{\"step\": \"facts\"}\n" {
		t.Errorf("fallback line %q", got)
	}
}

// TestJournalFormatWithoutAJournal: --log-format journal where no journal listens
// (tests run without /run/systemd/journal/socket, or with another one) logs to the
// console, saying so, rather than dropping lines.
func TestJournalFormatWithoutAJournal(t *testing.T) {
	if journal.Enabled() {
		t.Skip("this machine's journal is reachable")
	}
	var b bytes.Buffer
	log, err := NewLogger("journal", &b)
	if err != nil {
		t.Fatal(err)
	}
	log.Info("step done")
	if !strings.Contains(b.String(), "the journal's socket cannot be reached") || !strings.Contains(b.String(), "INFO\teksboot\tstep done") {
		t.Errorf("console fallback %q", b.String())
	}
	if _, err := NewLogger("syslog", &b); err == nil || err.Error() != `--log-format "syslog": want console, json or journal` {
		t.Errorf("bad format: %v", err)
	}
}

func TestJournalKey(t *testing.T) {
	for k, want := range map[string]string{"step": "EKSBOOT_STEP", "took": "EKSBOOT_TOOK", "unit": "UNIT", "imageProfile": "EKSBOOT_IMAGE_PROFILE", "nodeIP": "EKSBOOT_NODE_IP", "maxPodsSource": "EKSBOOT_MAX_PODS_SOURCE", "x-y": "EKSBOOT_X_Y", "é": "EKSBOOT__"} {
		if got := journalKey(k); got != want {
			t.Errorf("journalKey(%q) = %q, want %q", k, got, want)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
