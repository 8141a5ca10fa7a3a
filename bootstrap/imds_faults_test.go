package bootstrap

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/rootfs"
)

// faultPaths are the paths a bootstrap of golden case 01 reads, short name first
// (TestBootstrapIMDSGETs checks it reads no other): the instance ID, type, zone and
// IPv4 address come from the identity document.
var faultPaths = [][2]string{
	{"token", imds.PathToken},
	{"document", imds.PathIdentityDocument},
	{"domain", imds.PathDomain},
	{"mac", imds.PathMAC},
	{"hostname", imds.PathLocalHostname},
	{"vpc-cidrs", imds.PathVPCIPv4CIDRs("0a:1b:2c:3d:4e:5f")},
}

// faultKind is a row of the matrix: transient kinds end (Times > 0) or only
// slow the answers; permanent ones last.
type faultKind struct {
	name      string
	fault     imdstest.Fault
	transient bool
}

func faultKinds() []faultKind {
	st := func(code int) imdstest.Fault { return imdstest.Fault{Kind: imdstest.FaultStatus, Status: code} }
	n := func(times int, f imdstest.Fault) imdstest.Fault { f.Times = times; return f }
	hang := imdstest.Fault{Kind: imdstest.FaultHang}
	closed := imdstest.Fault{Kind: imdstest.FaultClose}
	expiry := imdstest.Fault{Kind: imdstest.FaultTokenExpiry}
	html := imdstest.Fault{Kind: imdstest.FaultBody, Body: "<html><body><h1>401 - Unauthorized</h1></body></html>"}
	empty := imdstest.Fault{Kind: imdstest.FaultBody}
	return []faultKind{
		{"slow (30ms)", imdstest.Fault{Kind: imdstest.FaultDelay, Delay: 30 * time.Millisecond}, true},
		{"hang x1", n(1, hang), true},
		{"close x2", n(2, closed), true},
		{"401 x2", n(2, st(401)), true},
		{"404 x2", n(2, st(404)), true},
		{"429 x2", n(2, st(429)), true},
		{"500 x2", n(2, st(500)), true},
		{"503 x2", n(2, st(503)), true},
		{"token expiry x1", n(1, expiry), true},
		{"HTML body x1", n(1, html), true},
		{"empty body x1", n(1, empty), true},
		{"hang", hang, false},
		{"close", closed, false},
		{"401", st(401), false},
		{"403", st(403), false},
		{"404", st(404), false},
		{"429", st(429), false},
		{"500", st(500), false},
		{"503", st(503), false},
		{"token expiry", expiry, false},
		{"HTML body", html, false},
		{"empty body", empty, false},
	}
}

// survives says whether a bootstrap must complete despite kind on path. A
// token PUT that answers 404 means no IMDSv2: fatal without IMDSv1 fallback.
// A lasting 404 of a path that may be absent is an answer, and the files do
// not depend on it (the domain is derived, EC2 names the node).
func survives(kind faultKind, short string) bool {
	is404 := kind.fault.Kind == imdstest.FaultStatus && kind.fault.Status == 404
	if kind.transient {
		return !is404 || short != "token"
	}
	return is404 && (short == "domain" || short == "hostname")
}

// fastRetries makes IMDS retries take milliseconds.
func fastRetries(o *imds.Options) {
	o.AttemptTimeout, o.MinBackoff, o.MaxBackoff = 150*time.Millisecond, 2*time.Millisecond, 10*time.Millisecond
}

// runFaulty bootstraps case c into dir against its own fake IMDS (srv), with
// the given --imds-timeout and the IMDS options changed by tune (if not nil).
// EC2 is the caller's fake, named by the environment.
func runFaulty(c goldencase.Case, srv *imdstest.Server, dir string, timeout time.Duration, tune func(*imds.Options), extra ...string) error {
	if err := c.WriteFiles(dir); err != nil {
		return err
	}
	root, err := rootfs.New(dir)
	if err != nil {
		return err
	}
	args := append(append([]string{}, c.Args...), "--root", dir, "--no-restart", "--kubelet-version", c.KubeletVersion,
		"--imds-endpoint", srv.URL(), "--imds-timeout", timeout.String())
	o, err := parseArgs(append(args, extra...), func(k string) string { return c.Env[k] })
	if err != nil {
		return err
	}
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	env.IMDS = func(ctx context.Context, o imds.Options) (*imds.Facts, error) {
		if tune != nil {
			tune(&o)
		}
		return imds.Fetch(ctx, o)
	}
	cfg, err := Validate(o)
	if err != nil {
		return err
	}
	return Run(context.Background(), cfg, env)
}

// tree reads every file under dir, by path relative to dir.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[rel] = string(b)
		return err
	}))
	return files
}

// TestIMDSFaultMatrix bootstraps golden case 01 under each fault kind on each
// path it reads. Transient faults must give the same files as a run without
// faults; permanent ones must fail before anything is written, with an error
// naming the path. Run with -v to see the matrix.
func TestIMDSFaultMatrix(t *testing.T) {
	c := base(t)
	c.StartFor(t) // the AWS SDK at the case's EC2; each run brings its own IMDS
	newServer := func() *imdstest.Server {
		s, err := imdstest.NewServer(c.IMDS)
		must(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	wantDir := t.TempDir()
	must(t, runFaulty(c, newServer(), wantDir, 20*time.Second, fastRetries))
	want := tree(t, wantDir)

	type cell struct {
		kind    faultKind
		short   string
		path    string
		err     error
		files   map[string]string
		elapsed time.Duration
	}
	var cells []*cell
	for _, k := range faultKinds() {
		for _, p := range faultPaths {
			cells = append(cells, &cell{kind: k, short: p[0], path: p[1]})
		}
	}
	// The runs mostly wait on fakes: run several at once, more than GOMAXPROCS. Not
	// many more: each run also makes its EC2 client and call while it reads IMDS,
	// and with 24 at once on 2 CPUs, runs starved past their 400 ms deadline.
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for _, cl := range cells {
		srv := newServer()
		srv.SetFaults(cl.path, cl.kind.fault)
		dir := t.TempDir()
		timeout := 400 * time.Millisecond // a permanent fault may be retried until this deadline
		if cl.kind.transient {
			timeout = 20 * time.Second
		}
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			cl.err = runFaulty(c, srv, dir, timeout, fastRetries)
			cl.elapsed = time.Since(start)
			cl.files = tree(t, dir)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // guard only: every run must end at its deadline
		t.Fatal("fault matrix still running after 2 minutes: a run is stalled past its --imds-timeout")
	}

	var survived, failedCleanly int
	var samples []string                    // the errors of the identity document's permanent faults
	marks := map[string]map[string]string{} // kind -> short path -> mark
	for _, cl := range cells {
		mark := "ok" // survived with the right files
		switch {
		case cl.err == nil && maps.Equal(cl.files, want):
			survived++
		case cl.err != nil && len(cl.files) == 0 && strings.Contains(cl.err.Error(), cl.path):
			mark = "fail" // failed cleanly: nothing written, the path named
			failedCleanly++
		default:
			mark = "WRONG"
		}
		if wantOK := survives(cl.kind, cl.short); (mark == "ok") != wantOK || mark == "WRONG" {
			t.Errorf("%s on %s: err %v, %d files written (equal to the fault-free run: %v) in %v; want %s",
				cl.kind.name, cl.path, cl.err, len(cl.files), maps.Equal(cl.files, want), cl.elapsed.Round(time.Millisecond),
				map[bool]string{true: "the fault-free files", false: "an error naming the path and nothing written"}[wantOK])
			mark += "!"
		}
		if cl.short == "document" && cl.err != nil {
			samples = append(samples, fmt.Sprintf("%-13s %v", cl.kind.name+":", cl.err))
		}
		if marks[cl.kind.name] == nil {
			marks[cl.kind.name] = map[string]string{}
		}
		marks[cl.kind.name][cl.short] = mark
	}

	var b strings.Builder
	fmt.Fprintf(&b, "IMDS fault matrix (ok: completed with the fault-free files; fail: failed naming the path, nothing written; ! unexpected)\n%-16s", "fault")
	for _, p := range faultPaths {
		fmt.Fprintf(&b, " %-9s", p[0])
	}
	for _, k := range faultKinds() {
		fmt.Fprintf(&b, "\n%-16s", k.name)
		for _, p := range faultPaths {
			fmt.Fprintf(&b, " %-9s", marks[k.name][p[0]])
		}
	}
	fmt.Fprintf(&b, "\nfaults tried: %d, survived: %d, failed cleanly: %d, unexpected: %d",
		len(cells), survived, failedCleanly, len(cells)-survived-failedCleanly)
	fmt.Fprintf(&b, "\nerrors of the permanent faults on the identity document:\n%s", strings.Join(samples, "\n"))
	t.Log(b.String())
}

// TestHungIMDSCannotStallBootstrap: whatever hangs, the bootstrap returns an
// error naming a path once --imds-timeout has passed, with nothing written.
// The attempt timeout is left at its default (5s), longer than the deadline.
func TestHungIMDSCannotStallBootstrap(t *testing.T) {
	c := base(t)
	c.StartFor(t) // the AWS SDK at the case's EC2; each run brings its own IMDS
	every := make([]string, 0, len(faultPaths))
	for _, p := range faultPaths {
		every = append(every, p[1])
	}
	tests := []struct {
		name  string
		paths []string // paths that hang
		want  string   // a path the error names
	}{
		{"token PUT hangs", []string{imds.PathToken}, imds.PathToken},
		{"everything hangs", every, imds.PathIdentityDocument},
		{"mac hangs", []string{imds.PathMAC}, imds.PathMAC},
		{"vpc cidrs hang", []string{imds.PathVPCIPv4CIDRs("0a:1b:2c:3d:4e:5f")}, "vpc-ipv4-cidr-blocks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // they all wait out the deadline
			srv, err := imdstest.NewServer(c.IMDS)
			must(t, err)
			t.Cleanup(func() { srv.Close() })
			for _, p := range tt.paths {
				srv.SetFaults(p, imdstest.Fault{Kind: imdstest.FaultHang})
			}
			dir := t.TempDir()
			errc := make(chan error, 1)
			go func() { errc <- runFaulty(c, srv, dir, time.Second, nil) }()
			select {
			case err := <-errc:
				if err == nil || !strings.Contains(err.Error(), "gave up at the 1s deadline") || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("err = %v; want one naming %s and the 1s deadline", err, tt.want)
				}
			case <-time.After(time.Minute): // guard only
				t.Fatal("bootstrap still running a minute after a 1s --imds-timeout")
			}
			if files := tree(t, dir); len(files) != 0 {
				t.Errorf("wrote %d files", len(files))
			}
		})
	}
}

// TestIMDSv1FallbackFlag: an IMDS that refuses tokens but answers IMDSv1 is
// used only with --imds-v1-fallback.
func TestIMDSv1FallbackFlag(t *testing.T) {
	c := base(t)
	c.StartFor(t) // the AWS SDK at the case's EC2; each run brings its own IMDS
	for _, fallback := range []bool{false, true} {
		t.Run(fmt.Sprintf("fallback=%v", fallback), func(t *testing.T) {
			srv, err := imdstest.NewServer(c.IMDS)
			must(t, err)
			t.Cleanup(func() { srv.Close() })
			srv.SetIMDSv1(true)
			srv.SetFaults(imds.PathToken, imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403})
			var extra []string
			if fallback {
				extra = []string{"--imds-v1-fallback"}
			}
			dir := t.TempDir()
			err = runFaulty(c, srv, dir, 20*time.Second, fastRetries, extra...)
			files := tree(t, dir)
			if fallback {
				if err != nil || files["etc/kubernetes/kubelet/kubelet-config.json"] == "" {
					t.Errorf("with --imds-v1-fallback: err %v, %d files; want a configured node", err, len(files))
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "IMDSv1 fallback is off") || len(files) != 0 {
				t.Errorf("without --imds-v1-fallback: err %v, %d files; want an error saying IMDSv1 fallback is off, nothing written", err, len(files))
			}
		})
	}
}
