package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/cli/flags"
	"github.com/eksboot/eksboot/systemd"

	"github.com/eksboot/eksboot/imds/imdstest"
)

func gzipped(t *testing.T, b []byte) string {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(b)
	must(t, err)
	must(t, zw.Close())
	return buf.String()
}

// initWith runs `eksboot init` on a simulated instance with the user data and the
// drop-ins, and returns the exit status, stderr and the root.
func initWith(t *testing.T, userData string, dropIns map[string]string, extra ...string) (int, string, string) {
	t.Helper()
	inst := imdstest.DefaultInstance()
	inst.UserData = userData
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	for name, body := range dropIns {
		p := filepath.Join(dir, "etc/eks/eksboot.d", name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(body), 0o644))
	}
	var stderr bytes.Buffer
	args := append([]string{"eksboot", "init", "--root", dir, "--no-restart", "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}, extra...)
	code := Main(args, io.Discard, &stderr)
	return code, stderr.String(), dir
}

func nodeConfig(t *testing.T, name string) string {
	b, err := os.ReadFile(filepath.Join(sampleDir, name))
	must(t, err)
	return string(b)
}

// TestInitBadInput: one line naming the part and the field, exit 1, nothing written.
func TestInitBadInput(t *testing.T) {
	offline(t)
	good := nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata")
	for _, tc := range []struct {
		name, userData, want string
		dropIns              map[string]string
	}{
		{name: "malformed MIME", userData: "Content-Type: multipart/mixed; boundary=B\n\nno delimiter\n", want: `part 1: multipart document without a "--B" delimiter line`},
		{
			name: "broken base64 part", userData: "Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\nContent-Transfer-Encoding: base64\n\n#%!\n--B--\n",
			want: "part 1 (application/node.eks.aws): Content-Transfer-Encoding base64: illegal base64 data at input byte 0",
		},
		{name: "broken gzip", userData: "\x1f\x8b\x08\x00broken", want: "user data: gzip: "},
		{name: "gzip bomb", userData: gzipped(t, bytes.Repeat([]byte("a"), 4<<20)), want: "user data: gzip: decoded data over the 1048576-byte limit (a gzip bomb?)"},
		{name: "over 64 KiB", userData: "#!/bin/bash\n" + strings.Repeat("#", 64<<10), want: "user data: 65548 bytes, more than the 65536 allowed"},
		{
			name: "wrong kind", userData: "Content-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\n\napiVersion: node.eks.aws/v1alpha1\nkind: Pod\n--B--\n",
			want: `user data: part 1 (application/node.eks.aws): kind: "Pod", want NodeConfig`,
		},
		{
			name: "unknown fields, all reported", userData: strings.Replace(good, "  kubelet:\n", "  kubelet:\n    flagz: []\n    config2: {}\n", 1),
			want: "user data: part 1 (application/node.eks.aws): spec.kubelet.config2: unknown field; part 1 (application/node.eks.aws): spec.kubelet.flagz: unknown field",
		},
		{
			name: "missing required field", userData: strings.Replace(good, "    cidr: 10.100.0.0/16\n", "", 1),
			want: "user data: merged NodeConfig: spec.cluster.cidr: required field missing",
		},
		{
			name: "bad kubelet config value", userData: strings.Replace(good, "maxPods: 110", "maxPods: lots", 1),
			want: `user data: part 1 (application/node.eks.aws): spec.kubelet.config.maxPods: want a whole number, got the string "lots"`,
		},
		{
			name: "bad values, named as NodeConfig fields", userData: strings.Replace(strings.Replace(good, "name: my-cluster", "name: -bad", 1), "    flags:\n", "    flags:\n      - \"--a=\\nb\"\n", 1),
			want: `user data: merged NodeConfig: spec.cluster.name "-bad" is not a cluster name: 1-100 letters, digits, '-' or '_', starting with a letter or digit; spec.kubelet.flags[0]: a line break at byte 4 is not allowed`,
		},
		{
			name: "duplicate key", userData: strings.Replace(good, "cidr: 10.100.0.0/16", "cidr: 10.100.0.0/16\n    name: other-cluster", 1),
			want: "user data: part 1 (application/node.eks.aws): spec.cluster.name: duplicate key",
		},
		{
			name: "bad drop-in", userData: good, dropIns: map[string]string{"50-x.yaml": "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {kubelet: {flagz: []}}\n"},
			want: "user data: /etc/eks/eksboot.d/50-x.yaml: spec.kubelet.flagz: unknown field",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr, dir := initWith(t, tc.userData, tc.dropIns)
			if code != 1 || !strings.Contains(stderr, "eksboot init: error: "+tc.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and %q", code, stderr, tc.want)
			}
			if tree, _ := readTree(dir); len(tree) != len(tc.dropIns) {
				t.Errorf("files written: %v", keys(tree))
			}
		})
	}
}

func TestInitNoNodeConfig(t *testing.T) {
	offline(t)
	code, stderr, dir := initWith(t, nodeConfig(t, "05-handwritten-custom-ami-script.userdata"), nil)
	if tree, _ := readTree(dir); code != 0 || len(tree) != 0 || !strings.Contains(stderr, "no NodeConfig in the user data") {
		t.Errorf("exit %d, files %v, stderr:\n%s", code, keys(tree), stderr)
	}
}

// TestInitDropIns: drop-ins are merged after the user data, in name order.
func TestInitDropIns(t *testing.T) {
	offline(t)
	code, stderr, dir := initWith(t, nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata"), map[string]string{
		"20-b.yaml":  "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {kubelet: {config: {maxPods: 20}, flags: [--node-labels=b=1]}}\n",
		"10-a.yaml":  "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {kubelet: {config: {maxPods: 10}, flags: [--node-labels=a=1]}}\n",
		"ignored.md": "not yaml",
	})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	tree, err := readTree(dir)
	must(t, err)
	if kc := string(tree["/etc/kubernetes/kubelet/kubelet-config.json"]); !strings.Contains(kc, `"maxPods": 20,`) {
		t.Errorf("maxPods is not the last drop-in's 20:\n%s", kc)
	}
	if f := kubeletFlags(tree); !strings.HasSuffix(f, "--node-labels=a=1 --node-labels=b=1") {
		t.Errorf("flags %q: want the drop-ins' flags appended in name order", f)
	}
}

// TestInitPhases: the config phase writes, reloads systemd and, for user data that
// is only NodeConfig, queues the kubelet's start without waiting for it; the run
// phase on the same (already written) files restarts nothing (containerd and the
// kubelet start after the config phase, on its files) and starts the kubelet; a
// file changed between the phases (a user-data script's drop-in) restarts what
// reads it.
func TestInitPhases(t *testing.T) {
	offline(t)
	ud := nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata")
	inst := imdstest.DefaultInstance()
	inst.UserData = ud
	srv, err := imdstest.NewServer(inst)
	must(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	dir := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(dir, bootstrap.StatusDir), 0o755))
	common := []string{"--root", dir, "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}
	sd := &recordingSystemd{}
	old := envHook
	envHook = func(env *bootstrap.Env) {
		old(env)
		env.Systemd = func(context.Context) (systemd.Manager, error) { return sd, nil }
	}
	t.Cleanup(func() { envHook = old })
	var stdout, stderr bytes.Buffer
	if code := Main(append([]string{"eksboot", "init", "--phase", "config"}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("config phase: exit %d\n%s", code, stderr.String())
	}
	if got := strings.Join(sd.calls, ", "); got != "daemon-reload, start --no-block kubelet.service" {
		t.Errorf("config phase asked systemd for %q, want a daemon-reload (its drop-ins must be seen by the units that start after it), then the kubelet's start queued", got)
	}
	const early = "kubelet start before cloud-final: the user data has only NodeConfig parts (1), which cloud-init does not run"
	if !strings.Contains(stderr.String(), early) {
		t.Errorf("config phase: the journal does not say %q:\n%s", early, stderr.String())
	}
	status, err := os.ReadFile(filepath.Join(dir, bootstrap.StatusPath))
	must(t, err)
	if !strings.Contains(string(status), `"kubeletStart": "before cloud-final: the user data has only NodeConfig parts (1)`) {
		t.Errorf("the status does not record the order:\n%s", status)
	}
	stdout.Reset()
	stderr.Reset()
	if code := Main(append([]string{"eksboot", "init", "--phase", "run", "--dry-run"}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("run phase: exit %d\n%s", code, stderr.String())
	}
	for _, want := range []string{"# every file is up to date", "# systemd: start kubelet.service"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("run phase (dry run) lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "restart") || strings.Contains(stdout.String(), "--no-block") {
		t.Errorf("run phase (dry run) restarts with nothing changed, or queues:\n%s", stdout.String())
	}
	dropIn := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {kubelet: {flags: [--node-labels=late=1]}}\n"
	must(t, os.MkdirAll(filepath.Join(dir, "etc/eks/eksboot.d"), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "etc/eks/eksboot.d/90-late.yaml"), []byte(dropIn), 0o644))
	stdout.Reset()
	if code := Main(append([]string{"eksboot", "init", "--phase", "run", "--dry-run"}, common...), &stdout, &stderr); code != 0 {
		t.Fatalf("run phase after a drop-in: exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "# systemd: restart kubelet.service") || strings.Contains(stdout.String(), "restart containerd") {
		t.Errorf("run phase after a kubelet drop-in: want the kubelet restarted, containerd not:\n%s", stdout.String())
	}
	if code := Main(append([]string{"eksboot", "init", "--phase", "later"}, common...), io.Discard, io.Discard); code != 2 {
		t.Errorf("--phase later: exit %d, want 2", code)
	}
}

// TestInitKubeletAfterCloudFinal: the config phase leaves the kubelet's start to the
// run phase, after cloud-final, when cloud-init runs a part of the user data (a
// script beside the NodeConfig) or when $EKSBOOT_KUBELET_START or --kubelet-start
// asks for it; and the journal says why. A value other than the two is exit 2.
func TestInitKubeletAfterCloudFinal(t *testing.T) {
	offline(t)
	nc := nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata")
	withScript := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n--B\nContent-Type: application/node.eks.aws\n\n" + nc +
		"\n--B\nContent-Type: text/x-shellscript\n\n#!/bin/sh\necho hello\n--B--\n"
	for _, tc := range []struct {
		name, userData, env string
		args                []string
		wantCalls, wantLine string
		wantCode            int
	}{
		{
			name: "a script part", userData: withScript, wantCalls: "daemon-reload",
			wantLine: "kubelet start after cloud-final: part 2 (text/x-shellscript) is a script that cloud-final runs",
		},
		{
			name: "asked by the variable", userData: nc, env: "after-cloud-final", wantCalls: "daemon-reload",
			wantLine: "kubelet start after cloud-final: asked for (--kubelet-start or EKSBOOT_KUBELET_START after-cloud-final), although the user data has only NodeConfig parts (1)",
		},
		{
			name: "asked by the flag", userData: nc, env: "auto", args: []string{"--kubelet-start", "after-cloud-final"}, wantCalls: "daemon-reload",
			wantLine: "kubelet start after cloud-final: asked for",
		},
		{
			name: "the flag wins over the variable", userData: nc, env: "after-cloud-final", args: []string{"--kubelet-start=auto"},
			wantCalls: "daemon-reload, start --no-block kubelet.service", wantLine: "kubelet start before cloud-final",
		},
		{
			name: "a bad value", userData: nc, env: "early", wantCode: 2,
			wantLine: `eksboot init: --kubelet-start (or $EKSBOOT_KUBELET_START) "early": want auto or after-cloud-final`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst := imdstest.DefaultInstance()
			inst.UserData = tc.userData
			srv, err := imdstest.NewServer(inst)
			must(t, err)
			t.Cleanup(func() { _ = srv.Close() })
			sd := &recordingSystemd{}
			old := envHook
			envHook = func(env *bootstrap.Env) {
				old(env)
				env.Systemd = func(context.Context) (systemd.Manager, error) { return sd, nil }
				getenv := env.Getenv
				env.Getenv = func(k string) string {
					if k == kubeletStartVar {
						return tc.env
					}
					return getenv(k)
				}
			}
			t.Cleanup(func() { envHook = old })
			var stderr bytes.Buffer
			args := append([]string{"eksboot", "init", "--phase", "config", "--root", t.TempDir(), "--kubelet-version", "1.32.9", "--imds-endpoint", srv.URL()}, tc.args...)
			if code := Main(args, io.Discard, &stderr); code != tc.wantCode {
				t.Fatalf("exit %d, want %d\n%s", code, tc.wantCode, stderr.String())
			}
			if got := strings.Join(sd.calls, ", "); got != tc.wantCalls {
				t.Errorf("systemd was asked for %q, want %q", got, tc.wantCalls)
			}
			if !strings.Contains(stderr.String(), tc.wantLine) {
				t.Errorf("stderr lacks %q:\n%s", tc.wantLine, stderr.String())
			}
		})
	}
}

// TestInitKubeReservedFromEffectiveMaxPods: with spec.maxPods.kubeReservedFromEffectiveMaxPods,
// kubeReserved is sized for kubelet.config.maxPods (110: 11*110+255), not the computed 29.
func TestInitKubeReservedFromEffectiveMaxPods(t *testing.T) {
	offline(t)
	ud := nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata")
	for _, tc := range []struct {
		name    string
		dropIns map[string]string
		want    string
	}{
		{"default: the computed max pods, as nodeadm", nil, `"memory": "574Mi"`},
		{"effective", map[string]string{"10.yaml": "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec: {maxPods: {kubeReservedFromEffectiveMaxPods: true}}\n"}, `"memory": "1465Mi"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stderr, dir := initWith(t, ud, tc.dropIns)
			if code != 0 {
				t.Fatalf("exit %d\n%s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(dir, "etc/kubernetes/kubelet/kubelet-config.json"))
			must(t, err)
			if !strings.Contains(string(b), tc.want) || !strings.Contains(string(b), `"maxPods": 110,`) {
				t.Errorf("want maxPods 110 and kubeReserved %s:\n%s", tc.want, b)
			}
		})
	}
}

// TestInitContainerdConfig: spec.containerd.config is merged onto the node's
// config.toml (its tables key by key), and bad TOML stops the run naming the field.
func TestInitContainerdConfig(t *testing.T) {
	offline(t)
	dropIn := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  containerd:\n    config: |\n" +
		"      [plugins.\"io.containerd.grpc.v1.cri\".registry.mirrors.\"docker.io\"]\n" +
		"      endpoint = [\"https://mirror.example.com\"]\n"
	code, stderr, dir := initWith(t, nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata"), map[string]string{"50-mirror.yaml": dropIn})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	tree, err := readTree(dir)
	must(t, err)
	conf := string(tree["/etc/containerd/config.toml"])
	for _, want := range []string{"https://mirror.example.com", `sandbox_image = '602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.5'`, "SystemdCgroup = true"} {
		if !strings.Contains(conf, want) {
			t.Errorf("config.toml lacks %s:\n%s", want, conf)
		}
	}

	bad := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  containerd:\n    config: \"[plugins\\nx = \"\n"
	code, stderr, dir = initWith(t, nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata"), map[string]string{"50-bad.yaml": bad})
	if code != 1 || !strings.Contains(stderr, "spec.containerd.config: not valid TOML") {
		t.Errorf("bad TOML: exit %d\n%s", code, stderr)
	}
	if tree, _ := readTree(dir); len(tree) != 1 { // only the drop-in itself
		t.Errorf("bad TOML wrote files: %d", len(tree))
	}
}

// TestInitInstanceSchema: the rest of nodeadm's schema reaches the node: two parts'
// spec.containerd.config merged as TOML (both kept), spec.instance.environment as
// systemd files, spec.instance.network as a resolved drop-in, InstanceIdNodeName as
// the node name, logging.verbosity instead of eksboot's --v=2, and
// spec.kubelet.maxPodsExpression over the instance type's facts (m5.large: max_pods
// 29, so 27), which sizes kubeReserved while the sample's kubelet.config.maxPods 110
// stays the kubelet's, as in nodeadm (in nodeadm's drop-in of the kubelet's
// configuration directory, where the AL2023 kubelet reads spec.kubelet.config).
func TestInitInstanceSchema(t *testing.T) {
	offline(t)
	part := func(spec string) string { return "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n" + spec }
	dropIns := map[string]string{
		"20-cdi.yaml":    part("  containerd:\n    config: |\n      [plugins.'io.containerd.cri.v1.runtime']\n      enable_cdi = true\n"),
		"30-mirror.yaml": part("  containerd:\n    config: |\n      [plugins.'io.containerd.cri.v1.images'.registry]\n      config_path = '/etc/containerd/certs.d'\n"),
		"40-env.yaml":    part("  instance:\n    environment:\n      default: {HTTPS_PROXY: 'http://proxy:3128'}\n      kubelet: {GODEBUG: 'x509negativeserial=1'}\n    network:\n      nameservers: [10.0.0.2]\n      domains: [corp.example]\n"),
		"50-gates.yaml":  part("  featureGates: {InstanceIdNodeName: true}\n  kubelet:\n    maxPodsExpression: 'max_pods - 2'\n    config: {logging: {verbosity: 5}}\n"),
	}
	code, stderr, dir := initWith(t, nodeConfig(t, "10-nodeadm-plain-nodeconfig.userdata"), dropIns, "--image-profile", "al2023")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	tree, err := readTree(dir)
	must(t, err)
	for path, wants := range map[string][]string{
		"/etc/containerd/config.toml":                                {"enable_cdi = true", "config_path = '/etc/containerd/certs.d'"},
		"/etc/systemd/system.conf.d/environment.conf":                {`DefaultEnvironment="HTTPS_PROXY=http://proxy:3128"`},
		"/etc/systemd/system/kubelet.service.d/environment.conf":     {`Environment="GODEBUG=x509negativeserial=1"`},
		"/run/systemd/resolved.conf.d/40-eks.conf":                   {"DNS=10.0.0.2", "Domains=corp.example"},
		"/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf": {"--hostname-override=i-0123456789abcdef0 "},
		"/etc/kubernetes/kubelet/kubelet-config.json":                {`"memory": "552Mi"`},                // kubeReserved is for the expression's 27
		"/etc/kubernetes/kubelet/config.json.d/40-nodeadm.conf":      {`"maxPods": 110`, `"verbosity": 5`}, // config.maxPods wins, in nodeadm's drop-in
		"/etc/systemd/system/containerd.service.d/environment.conf":  nil,                                  // no containerd key: no file
	} {
		got, ok := tree[path]
		if wants == nil {
			if ok {
				t.Errorf("%s written:\n%s", path, got)
			}
			continue
		}
		for _, want := range wants {
			if !strings.Contains(string(got), want) {
				t.Errorf("%s lacks %s:\n%s", path, want, got)
			}
		}
	}
	if args := string(tree["/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"]); strings.Contains(args, "--v=") {
		t.Errorf("--v passed though logging.verbosity is set: %s", args)
	}
}

// recordingSystemd is a systemd.Manager that records what it is asked.
type recordingSystemd struct{ calls []string }

func (r *recordingSystemd) Reload(context.Context) error {
	r.calls = append(r.calls, "daemon-reload")
	return nil
}

func (r *recordingSystemd) Enable(_ context.Context, units ...string) error {
	r.calls = append(r.calls, "enable "+strings.Join(units, " "))
	return nil
}

func (r *recordingSystemd) Start(_ context.Context, u string) error {
	r.calls = append(r.calls, "start "+u)
	return nil
}

func (r *recordingSystemd) Restart(_ context.Context, u string) error {
	r.calls = append(r.calls, "restart "+u)
	return nil
}

func (r *recordingSystemd) StartNoBlock(_ context.Context, u string) error {
	r.calls = append(r.calls, "start --no-block "+u)
	return nil
}

func (r *recordingSystemd) Signal(context.Context, string, syscall.Signal) error { return nil }
func (r *recordingSystemd) ActiveState(context.Context, string) (string, error) {
	return "active", nil
}
func (r *recordingSystemd) Close() {}

// TestInitFlagsAreBootstraps: init's own flags have bootstrap's defaults and help
// (they were declared twice, and init's --log-format said "console or json").
func TestInitFlagsAreBootstraps(t *testing.T) {
	var io, bo bootstrap.Options
	var phase, kubeletStart string
	ifs, bfs := initFlags("init", &io, &phase, &kubeletStart), flags.Bootstrap("bootstrap", &bo)
	for _, name := range []string{"root", "log-format", "imds-timeout", "systemd-timeout", "discovery-timeout"} {
		i, b := ifs.Lookup(name), bfs.Lookup(name)
		if i == nil || b == nil || i.DefValue != b.DefValue {
			t.Errorf("--%s: init %+v, bootstrap %+v", name, i, b)
		}
	}
	if u := ifs.Lookup("log-format").Usage; u != flags.LogFormatUsage || !strings.Contains(u, "journal") {
		t.Errorf("init --log-format: %q", u)
	}
}
