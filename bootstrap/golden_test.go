package bootstrap

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/rootfs"
)

// goldenDir holds bootstrap.sh's outputs for a set of cases (see testdata/README.md).
const goldenDir = "../testdata/golden"

// runCase runs eksboot in-process on a golden case into a fresh root and returns it.
func runCase(t *testing.T, c goldencase.Case, log *zap.Logger) (string, error) {
	t.Helper()
	return runCaseWith(t, c, log, nil)
}

// runCaseWith is runCase with a hook that may replace parts of the environment.
func runCaseWith(t *testing.T, c goldencase.Case, log *zap.Logger, edit func(*Env)) (string, error) {
	t.Helper()
	fakes := c.StartFor(t)
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(append([]string{}, c.Args...), "--root", dir, "--no-restart",
		"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
	o, err := parseArgs(args, func(k string) string { return c.Env[k] })
	if err != nil {
		return dir, err
	}
	env := DefaultEnv(root, log, &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	if edit != nil {
		edit(env)
	}
	return dir, runOptions(t, context.Background(), o, env)
}

// TestGolden runs eksboot on the inputs of every golden case and compares its files
// with what bootstrap.sh wrote: kubelet-config.json as JSON (keys the kubelet treats as
// unset may be missing), the drop-ins, kubeconfig, CA and containerd config byte for byte.
func TestGolden(t *testing.T) {
	cases, err := goldencase.LoadAll(goldenDir)
	must(t, err)
	for _, c := range cases {
		if c.ExitCode != 0 {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			core, logs := observer.New(zap.InfoLevel)
			dir, err := runCase(t, c, zap.New(core))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			want := c.Dir
			for _, rel := range []string{
				"var/lib/kubelet/kubeconfig",
				"etc/kubernetes/pki/ca.crt",
				"etc/systemd/system/kubelet.service.d/10-kubelet-args.conf",
				"etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf",
				"etc/containerd/config.toml",
			} {
				wantB, werr := os.ReadFile(filepath.Join(want, rel))
				gotB, gerr := os.ReadFile(filepath.Join(dir, rel))
				if os.IsNotExist(werr) && os.IsNotExist(gerr) {
					continue
				}
				if werr != nil || gerr != nil || !bytes.Equal(gotB, wantB) {
					t.Errorf("%s differs from bootstrap.sh's:\n got (%v): %q\nwant (%v): %q", rel, gerr, gotB, werr, wantB)
				}
			}
			got := readJSON(t, filepath.Join(dir, "etc/kubernetes/kubelet/kubelet-config.json"))
			exp := readJSON(t, filepath.Join(want, "etc/kubernetes/kubelet/kubelet-config.json"))
			for _, d := range jsonDiff("", exp, got) {
				t.Errorf("kubelet-config.json: %s", d)
			}
			for _, e := range logs.All() {
				if strings.Contains(fmt.Sprint(e.Message, e.ContextMap()), "BEGIN CERTIFICATE") {
					t.Errorf("the log shows the CA: %v", e)
				}
			}
		})
	}
}

func readJSON(t *testing.T, p string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(p)
	must(t, err)
	var v map[string]any
	must(t, json.Unmarshal(b, &v))
	return v
}

// jsonDiff lists the differences between want and got; a key on one side only is not a
// difference when its value is one the kubelet treats as unset (0, "", "0s", {}, []).
func jsonDiff(path string, want, got map[string]any) []string {
	var out []string
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want[k]
		g, gok := got[k]
		p := path + "." + k
		switch {
		case !gok:
			if !unset(w) {
				out = append(out, fmt.Sprintf("%s missing (want %v)", p, w))
			}
		case !wok:
			if !unset(g) {
				out = append(out, fmt.Sprintf("%s unexpected (%v)", p, g))
			}
		default:
			wm, wIsMap := w.(map[string]any)
			gm, gIsMap := g.(map[string]any)
			if wIsMap && gIsMap {
				out = append(out, jsonDiff(p, wm, gm)...)
			} else if !reflect.DeepEqual(w, g) {
				out = append(out, fmt.Sprintf("%s = %v, want %v", p, g, w))
			}
		}
	}
	return out
}

func unset(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case float64:
		return x == 0
	case string:
		return x == "" || x == "0s" || x == "0"
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !unset(e) {
				return false
			}
		}
		return true
	}
	return false
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// runOptions validates o and runs it, as the bootstrap command does (cli/flags.Parse, Validate, Run),
// and fails t when the run changes the validated Config (runReadOnly).
func runOptions(t testing.TB, ctx context.Context, o Options, env *Env) error {
	t.Helper()
	c, err := Validate(o)
	if err != nil {
		return err
	}
	return runReadOnly(t, ctx, c, env)
}
