package cli

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/bootstrap"
)

// TestStopLineSaysWhere: the line of a run stopped by a signal names the signal and
// the step it was in (from bootstrap's step events), and whether files may have
// changed; a run that ended well is not reported as stopped.
func TestStopLineSaysWhere(t *testing.T) {
	errFailed := errors.New("it failed")
	for _, tc := range []struct {
		name    string
		events  []bootstrap.StepEvent
		blocked bool
		want    string
	}{
		{
			"failed step",
			[]bootstrap.StepEvent{{Step: "lock", Ended: true}, {Step: "instance facts", Ended: true, Err: errFailed}},
			false,
			`p: stopped by SIGTERM in the "instance facts" step (no file written)`,
		},
		{
			"started step, blocked",
			[]bootstrap.StepEvent{{Step: "lock", Ended: true}, {Step: "instance facts"}},
			true,
			`p: stopped by SIGTERM in the "instance facts" step (no file written): still blocked 1s after the signal, given up`,
		},
		{
			"after a step, blocked",
			[]bootstrap.StepEvent{{Step: "lock", Ended: true}},
			true,
			`p: stopped by SIGTERM after the "lock" step (no file written): still blocked 1s after the signal, given up`,
		},
		{
			"blocked after the diff",
			[]bootstrap.StepEvent{{Step: "diff", Ended: true}},
			true,
			`p: stopped by SIGTERM after the "diff" step (the node's files may be partly updated; run it again): still blocked 1s after the signal, given up`,
		},
		{
			"failed restart",
			[]bootstrap.StepEvent{{Step: "write", Ended: true}, {Step: "restart", Ended: true, Err: errFailed}},
			false,
			`p: stopped by SIGTERM in the "restart" step`,
		},
		{"no step", nil, false, "p: stopped by SIGTERM before its first step ended (no file written)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runState{}
			r.signalled(syscall.SIGTERM)
			for _, e := range tc.events {
				r.step(e)
			}
			got, ok := r.stopped("p", tc.blocked)
			if !ok || got != tc.want {
				t.Errorf("stopped = %q, %v; want %q", got, ok, tc.want)
			}
			if _, ok := r.stopped("p", tc.blocked); ok {
				t.Error("reported twice")
			}
		})
	}
	r := &runState{}
	r.signalled(syscall.SIGTERM)
	r.ended()
	if _, ok := r.giveUp("p"); ok {
		t.Error("a run that ended well was given up")
	}
}

// TestFinishWritesOneShortLine: whatever an error holds, finish writes one line of
// at most about 8 KiB.
func TestFinishWritesOneShortLine(t *testing.T) {
	var stderr bytes.Buffer
	code := Finish("p", errors.New(strings.Repeat("é", 100<<10)+"\nsecond line"), zap.NewNop(), &stderr)
	line := stderr.String()
	if code != ExitFailure || strings.Count(line, "\n") != 1 || len(line) > maxLine+64 || !strings.HasSuffix(line, "…(204812 bytes)\n") {
		t.Errorf("exit %d, %d bytes, %d line breaks, ends %q", code, len(line), strings.Count(line, "\n"), line[max(0, len(line)-40):])
	}
}
