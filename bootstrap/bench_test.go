package bootstrap

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/rootfs"
)

// BenchmarkRun measures the whole pipeline in-process: Run on golden case 01
// (m5.large, in the table: no EC2 type call) against its fake IMDS and EC2 on
// 127.0.0.1, --no-restart, logging nowhere. "fresh-root" writes every file into an
// empty root each time; "rerun" runs again on a configured root, where nothing
// changes and nothing is written. `make bench` runs it with -benchmem.
func BenchmarkRun(b *testing.B) {
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	must(b, err)
	fakes := c.StartFor(b)
	unsetAWSExtras(b)
	run := func(b *testing.B, dir string) {
		root, err := rootfs.New(dir)
		must(b, err)
		args := append(slices.Clone(c.Args), "--root", dir, "--no-restart",
			"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
		o, err := parseArgs(args, noEnv)
		must(b, err)
		env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
		env.CPUs = c.CPUs
		env.Getenv = noEnv
		env.DNSNameAttempts, env.DNSNameInterval = 1, 0
		must(b, runOptions(b, context.Background(), o, env))
	}
	b.Run("fresh-root", func(b *testing.B) {
		base := b.TempDir()
		for b.Loop() {
			b.StopTimer()
			dir, err := os.MkdirTemp(base, "root-")
			must(b, err)
			b.StartTimer()
			run(b, dir)
		}
	})
	b.Run("rerun", func(b *testing.B) {
		dir := b.TempDir()
		run(b, dir)
		for b.Loop() {
			run(b, dir)
		}
	})
}

// unsetAWSExtras unsets the SDK variables that a developer's or CI's shell may set
// and a node does not, for the time of tb: AWS_CA_BUNDLE alone makes every
// LoadConfig parse a whole bundle of certificates (some 3 ms), which would be
// measured as the pipeline's.
func unsetAWSExtras(tb testing.TB) {
	for _, k := range []string{"AWS_CA_BUNDLE", "AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE"} {
		tb.Setenv(k, "") // registers the restore
		os.Unsetenv(k)
	}
}
