package cli

import (
	"fmt"
	"io"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// newLogger returns the logger for format "console" (human lines without timestamps:
// journald adds them) or "json" (one object per line, for log pipelines).
func newLogger(format string, w io.Writer) (*zap.Logger, error) {
	cfg := zapcore.EncoderConfig{
		MessageKey:     "msg",
		LevelKey:       "level",
		NameKey:        "logger",
		EncodeLevel:    zapcore.CapitalLevelEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeTime:     zapcore.ISO8601TimeEncoder,
	}
	var enc zapcore.Encoder
	switch format {
	case "console":
		enc = zapcore.NewConsoleEncoder(cfg)
	case "json":
		cfg.TimeKey = "ts"
		cfg.EncodeLevel = zapcore.LowercaseLevelEncoder
		enc = zapcore.NewJSONEncoder(cfg)
	default:
		return nil, fmt.Errorf("--log-format %q: want console or json", format)
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), zapcore.InfoLevel)
	return zap.New(core).Named("eksboot"), nil
}
