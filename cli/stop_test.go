package cli

import (
	"bytes"
	"errors"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// TestStopLineSaysWhere: the line of a run stopped by a signal names the signal and
// the step it was in (from the log's step entries), and whether files may have
// changed; a run that ended well is not reported as stopped.
func TestStopLineSaysWhere(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries [][2]string // message, step
		blocked bool
		want    string
	}{
		{
			"failed step",
			[][2]string{{"step done", "lock"}, {"step failed", "instance facts"}},
			false,
			`p: stopped by SIGTERM in the "instance facts" step (no file written)`,
		},
		{
			"started step, blocked",
			[][2]string{{"step done", "lock"}, {"step started", "instance facts"}},
			true,
			`p: stopped by SIGTERM in the "instance facts" step (no file written): still blocked 1s after the signal, given up`,
		},
		{
			"after a step, blocked",
			[][2]string{{"step done", "lock"}},
			true,
			`p: stopped by SIGTERM after the "lock" step (no file written): still blocked 1s after the signal, given up`,
		},
		{
			"blocked after the diff",
			[][2]string{{"step done", "diff"}},
			true,
			`p: stopped by SIGTERM after the "diff" step (the node's files may be partly updated; run it again): still blocked 1s after the signal, given up`,
		},
		{
			"failed restart",
			[][2]string{{"step done", "write"}, {"step failed", "restart"}},
			false,
			`p: stopped by SIGTERM in the "restart" step`,
		},
		{"no step", nil, false, "p: stopped by SIGTERM before its first step ended (no file written)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &runState{}
			log := zap.New(zapcore.NewNopCore()).WithOptions(zap.WrapCore(func(c zapcore.Core) zapcore.Core { return &stepCore{Core: c, run: r} }))
			r.signalled(syscall.SIGTERM)
			for _, e := range tc.entries {
				log.With(zap.String("x", "y")).Debug(e[0], zap.String("step", e[1]))
			}
			if runStateOf(log) != r {
				t.Fatal("runStateOf does not find the session's state")
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
	code := finish("p", errors.New(strings.Repeat("é", 100<<10)+"\nsecond line"), zap.NewNop(), &stderr)
	line := stderr.String()
	if code != exitFailure || strings.Count(line, "\n") != 1 || len(line) > maxLine+64 || !strings.HasSuffix(line, "…(204812 bytes)\n") {
		t.Errorf("exit %d, %d bytes, %d line breaks, ends %q", code, len(line), strings.Count(line, "\n"), line[max(0, len(line)-40):])
	}
}
