package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unicode"

	"github.com/coreos/go-systemd/v22/journal"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/internal/scrub"
)

// NewLogger returns the logger for format "console" (human lines without timestamps:
// journald adds them), "json" (one object per line, for log pipelines) or "journal"
// (the journal's native protocol: each entry at its priority, its fields as journal
// fields). Under systemd, when w is stderr and stderr is the journal's stream
// (JOURNAL_STREAM names it), "console" logs to the journal too: through the stream
// every line would be stored at priority 6, so `journalctl -p warning` would miss the
// warnings. When the journal's socket cannot be reached, the console encoder is used.
func NewLogger(format string, w io.Writer) (*zap.Logger, error) {
	switch format {
	case bootstrap.LogConsole, bootstrap.LogJSON, bootstrap.LogJournal:
	default:
		return nil, fmt.Errorf("--log-format %q: want %s, %s or %s", format, bootstrap.LogConsole, bootstrap.LogJSON, bootstrap.LogJournal)
	}
	wantJournal := format == bootstrap.LogJournal || (format == bootstrap.LogConsole && w == io.Writer(os.Stderr) && stderrIsJournal())
	if wantJournal && journal.Enabled() {
		return zap.New(secretsCore{newJournalCore(journal.Send, w)}).Named("eksboot"), nil
	}
	cfg := encoderConfig()
	var enc zapcore.Encoder
	if format == bootstrap.LogJSON {
		cfg.TimeKey = "ts"
		cfg.EncodeLevel = zapcore.LowercaseLevelEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	} else {
		enc = zapcore.NewConsoleEncoder(cfg)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), zapcore.InfoLevel)
	log := zap.New(secretsCore{core}).Named("eksboot")
	if wantJournal {
		log.Warn("--log-format journal: the journal's socket cannot be reached; logging to stderr")
	}
	return log, nil
}

// secretsCore is a core that removes the process's own credentials
// (scrub.Process) from each entry's message and its text and error fields before
// the core under it writes them: the clients scrub what they quote from answers;
// this is the last guard of what the journal keeps.
type secretsCore struct{ zapcore.Core }

// With implements zapcore.Core.
func (c secretsCore) With(fields []zapcore.Field) zapcore.Core {
	return secretsCore{c.Core.With(scrubFields(fields))}
}

// Check implements zapcore.Core: the entry is written through c.
func (c secretsCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

// Write implements zapcore.Core.
func (c secretsCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = scrub.Process.Remove(e.Message)
	return c.Core.Write(e, scrubFields(fields))
}

// scrubFields returns fields with the process's credentials removed from their
// strings, errors and string lists.
func scrubFields(fields []zapcore.Field) []zapcore.Field {
	out := make([]zapcore.Field, len(fields))
	for i, f := range fields {
		switch f.Type {
		case zapcore.StringType:
			f.String = scrub.Process.Remove(f.String)
		case zapcore.ErrorType, zapcore.StringerType:
			if v, ok := f.Interface.(interface{ Error() string }); ok {
				f = zap.String(f.Key, scrub.Process.Remove(v.Error()))
			} else if v, ok := f.Interface.(fmt.Stringer); ok {
				f = zap.String(f.Key, scrub.Process.Remove(v.String()))
			}
		}
		out[i] = f
	}
	return out
}

// stderrIsJournal reports whether stderr is the journal stream that JOURNAL_STREAM
// names (its device and inode), as systemd sets it for a unit's standard error.
func stderrIsJournal() bool {
	ok, err := journal.StderrIsJournalStream()
	return ok && err == nil
}

// encoderConfig is the console and JSON encoders' configuration.
func encoderConfig() zapcore.EncoderConfig {
	return zapcore.EncoderConfig{
		MessageKey:     "msg",
		LevelKey:       "level",
		NameKey:        "logger",
		EncodeLevel:    zapcore.CapitalLevelEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeTime:     zapcore.ISO8601TimeEncoder,
	}
}

// journalSend is journal.Send's shape: the core's one side effect.
type journalSend func(message string, priority journal.Priority, vars map[string]string) error

// journalCore is a zap core that sends each entry to the journal: MESSAGE is the
// console line without its level (the message and its fields, so plain journalctl
// shows them), PRIORITY the entry's level, and each field a journal field of its own
// (step as EKSBOOT_STEP, took as EKSBOOT_TOOK, unit as UNIT).
type journalCore struct {
	send     journalSend
	fallback io.Writer // where an entry goes when the journal refuses it
	fields   []zapcore.Field
	text     zapcore.Encoder
}

func newJournalCore(send journalSend, fallback io.Writer) *journalCore {
	cfg := encoderConfig()
	cfg.LevelKey, cfg.NameKey = "", ""
	return &journalCore{send: send, fallback: fallback, text: zapcore.NewConsoleEncoder(cfg)}
}

func (c *journalCore) Enabled(l zapcore.Level) bool { return l >= zapcore.InfoLevel }

func (c *journalCore) With(fields []zapcore.Field) zapcore.Core {
	clone := *c
	clone.fields = append(append([]zapcore.Field(nil), c.fields...), fields...)
	return &clone
}

func (c *journalCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *journalCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	all := append(append([]zapcore.Field(nil), c.fields...), fields...)
	buf, err := c.text.EncodeEntry(e, all)
	if err != nil {
		return err
	}
	line := buf.String()
	buf.Free()
	vars := journalFields(all)
	if e.LoggerName != "" {
		vars["SYSLOG_IDENTIFIER"] = strings.SplitN(e.LoggerName, ".", 2)[0]
	}
	if err := c.send(strings.TrimSuffix(line, "\n"), journalPriority(e.Level), vars); err != nil {
		// Not lost: the line goes where it would have gone without the journal.
		name := ""
		if e.LoggerName != "" {
			name = e.LoggerName + "\t"
		}
		_, _ = fmt.Fprintf(c.fallback, "%s\t%s%s", e.Level.CapitalString(), name, line)
	}
	return nil
}

func (c *journalCore) Sync() error { return nil }

// journalPriority is the syslog priority of a zap level.
func journalPriority(l zapcore.Level) journal.Priority {
	switch {
	case l <= zapcore.DebugLevel:
		return journal.PriDebug
	case l == zapcore.InfoLevel:
		return journal.PriInfo
	case l == zapcore.WarnLevel:
		return journal.PriWarning
	case l == zapcore.ErrorLevel:
		return journal.PriErr
	}
	return journal.PriCrit // DPanic, Panic, Fatal
}

// journalFields turns zap fields into journal fields: unit is systemd's own UNIT
// field, every other key is EKSBOOT_ and the key in upper snake case (imageProfile:
// EKSBOOT_IMAGE_PROFILE). Durations are written as Go prints them (1.5s), lists and
// objects as JSON.
func journalFields(fields []zapcore.Field) map[string]string {
	enc := zapcore.NewMapObjectEncoder()
	for _, f := range fields {
		f.AddTo(enc)
	}
	vars := make(map[string]string, len(enc.Fields)+1)
	for k, v := range enc.Fields {
		var s string
		switch v := v.(type) {
		case string:
			s = v
		case time.Duration:
			s = v.String()
		case fmt.Stringer:
			s = v.String()
		default:
			s = jsonValue(v)
		}
		vars[journalKey(k)] = s
	}
	return vars
}

// jsonValue is v in JSON, or as fmt prints it.
func jsonValue(v any) string {
	enc := zapcore.NewJSONEncoder(zapcore.EncoderConfig{})
	buf, err := enc.EncodeEntry(zapcore.Entry{}, []zapcore.Field{zap.Any("v", v)})
	if err != nil {
		return fmt.Sprint(v)
	}
	defer buf.Free()
	s := strings.TrimSpace(buf.String())
	s = strings.TrimPrefix(s, `{"v":`)
	return strings.TrimSuffix(s, "}")
}

// journalKey is the journal field name of a zap key.
func journalKey(k string) string {
	if k == "unit" {
		return "UNIT"
	}
	var b strings.Builder
	b.WriteString("EKSBOOT_")
	var prev rune
	for _, r := range k {
		switch {
		case r >= 'A' && r <= 'Z':
			if prev >= 'a' && prev <= 'z' || prev >= '0' && prev <= '9' {
				b.WriteByte('_') // a new word: imageProfile, nodeIP
			}
			b.WriteRune(r)
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(unicode.ToUpper(r))
		default:
			b.WriteByte('_')
		}
		prev = r
	}
	return b.String()
}
