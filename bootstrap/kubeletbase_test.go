package bootstrap

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodeconfig"
	"github.com/eksboot/eksboot/rootfs"
	"github.com/eksboot/eksboot/userdata"
)

// preEdited is the AMI's kubelet-config.json as a user data script leaves it before
// bootstrap.sh (jq '.kubeAPIQPS=50 | ...'): keys bootstrap.sh never sets, and one it
// replaces (evictionHard).
func preEdited(t *testing.T) string {
	t.Helper()
	var m map[string]any
	must(t, json.Unmarshal(assets.KubeletConfig, &m))
	m["kubeAPIQPS"], m["kubeAPIBurst"], m["registryPullQPS"] = 50, 100, 20
	m["systemReserved"] = map[string]any{"cpu": "100m", "memory": "200Mi"}
	m["evictionHard"] = map[string]any{"memory.available": "5%"}
	b, err := json.MarshalIndent(m, "", "  ")
	must(t, err)
	return string(b) + "\n"
}

// rerunIn runs eksboot bootstrap with c's arguments (and extra) on the root dir as it is.
func rerunIn(t *testing.T, c goldencase.Case, dir string, extra ...string) error {
	t.Helper()
	fakes := c.StartFor(t)
	root, err := rootfs.New(dir)
	must(t, err)
	args := append(append(append([]string{}, c.Args...), extra...), "--root", dir, "--no-restart",
		"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL())
	o, err := parseArgs(args, func(k string) string { return c.Env[k] })
	if err != nil {
		return err
	}
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(k string) string { return c.Env[k] }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	return runOptions(t, context.Background(), o, env)
}

// inodes maps every file under dir to its inode: a file eksboot rewrites gets a new
// one (it renames a new file over the old).
func inodes(t *testing.T, dir string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		out[p] = st.Sys().(*syscall.Stat_t).Ino
		return nil
	}))
	return out
}

func writeNodeFile(t *testing.T, dir, p, content string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
	must(t, os.WriteFile(filepath.Join(dir, p), []byte(content), 0o644))
}

// TestTheNodesKubeletConfigIsTheBase: as bootstrap.sh edited the image's
// kubelet-config.json in place, keys it never set (a user data script's) survive;
// a second run with the same inputs writes nothing; a run with other inputs gives
// the file a first boot with those inputs gives (bootstrap.sh's edits of the first
// run do not stay behind); and a file edited by hand after a run is the next base.
func TestTheNodesKubeletConfigIsTheBase(t *testing.T) {
	c := base(t)
	c.Files = map[string]string{kubeletconf.ConfigPath: preEdited(t)}
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	must(t, rerunIn(t, c, dir))
	k := kubeletConfig(t, dir)
	if k["kubeAPIQPS"] != 50.0 || k["kubeAPIBurst"] != 100.0 || k["registryPullQPS"] != 20.0 || k["systemReserved"].(map[string]any)["memory"] != "200Mi" {
		t.Errorf("the user data's keys are gone: %v", k)
	}
	if e := k["evictionHard"].(map[string]any); e["memory.available"] != "100Mi" || len(e) != 3 || k["maxPods"] != 29.0 {
		t.Errorf("bootstrap.sh's edits: evictionHard %v, maxPods %v", e, k["maxPods"])
	}
	if _, err := os.Stat(filepath.Join(dir, KubeletBasePath)); err != nil {
		t.Fatalf("no record of the base: %v", err)
	}

	before := inodes(t, dir)
	must(t, rerunIn(t, c, dir))
	for p, ino := range inodes(t, dir) {
		if before[p] != ino {
			t.Errorf("the second run rewrote %s", p)
		}
	}

	// Other inputs: --use-max-pods false leaves the template's maxPods (none), as
	// on a first boot; the first run's maxPods does not stay behind.
	fresh := t.TempDir()
	must(t, c.WriteFiles(fresh))
	must(t, rerunIn(t, c, fresh, "--use-max-pods", "false"))
	must(t, rerunIn(t, c, dir, "--use-max-pods", "false"))
	got, want := readFile(t, dir, kubeletconf.ConfigPath), readFile(t, fresh, kubeletconf.ConfigPath)
	if got != want {
		t.Errorf("after a run with other inputs:\n%s\nwant a first boot's:\n%s", got, want)
	}
	if _, ok := kubeletConfig(t, dir)["maxPods"]; ok {
		t.Error("maxPods stayed from the first run")
	}

	// A hand edit after the run is the node's file again: it stays, as under a second
	// bootstrap.sh.
	var m map[string]any
	must(t, json.Unmarshal([]byte(got), &m))
	m["imageGCHighThresholdPercent"] = 90
	b, _ := json.Marshal(m)
	writeNodeFile(t, dir, kubeletconf.ConfigPath, string(b))
	must(t, rerunIn(t, c, dir, "--use-max-pods", "false"))
	if k := kubeletConfig(t, dir); k["imageGCHighThresholdPercent"] != 90.0 || k["kubeAPIQPS"] != 50.0 {
		t.Errorf("the hand edit or the first base's keys are gone: %v", k)
	}
}

// TestABaseRecordAheadOfItsFile: the record is renamed before kubelet-config.json,
// so a run killed between the two leaves the old file, which the record still
// knows: the next run takes the kept base, not the old file, as its base.
func TestABaseRecordAheadOfItsFile(t *testing.T) {
	c := base(t)
	c.Files = map[string]string{kubeletconf.ConfigPath: preEdited(t)}
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	must(t, rerunIn(t, c, dir))
	old := readFile(t, dir, kubeletconf.ConfigPath)
	must(t, rerunIn(t, c, dir, "--use-max-pods", "false"))
	writeNodeFile(t, dir, kubeletconf.ConfigPath, old) // the record is the second run's
	must(t, rerunIn(t, c, dir, "--use-max-pods", "false"))
	if _, ok := kubeletConfig(t, dir)["maxPods"]; ok {
		t.Error("the old file was taken as the base: maxPods stayed")
	}
	var rec kubeletBaseRecord
	must(t, json.Unmarshal([]byte(readFile(t, dir, KubeletBasePath)), &rec))
	if len(rec.Written) != kubeletBaseKeep {
		t.Errorf("the record knows %d files, want %d", len(rec.Written), kubeletBaseKeep)
	}
}

// TestABadNodeKubeletConfigIsRefused: the node's file is input like any other: one
// the kubelet would refuse is an error naming it, and nothing is written.
func TestABadNodeKubeletConfigIsRefused(t *testing.T) {
	for name, content := range map[string]string{
		"unknown field": `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","kubeAPIQPZ":50}`,
		"no type":       `{"kubeAPIQPS":50}`,
		"not JSON":      `{"kubeAPIQPS":`,
	} {
		t.Run(name, func(t *testing.T) {
			c := base(t)
			c.Files = map[string]string{kubeletconf.ConfigPath: content}
			dir := t.TempDir()
			must(t, c.WriteFiles(dir))
			err := rerunIn(t, c, dir)
			if err == nil || !strings.Contains(err.Error(), kubeletconf.ConfigPath) {
				t.Fatalf("err = %v, want one naming %s", err, kubeletconf.ConfigPath)
			}
			if got := filesUnder(t, dir); len(got) != 1 {
				t.Errorf("wrote %v", got)
			}
		})
	}
}

// runNodeConfig runs a NodeConfig on the AL2023 profile on dir (as eksboot init).
func runNodeConfig(t *testing.T, c goldencase.Case, dir, doc string) error {
	t.Helper()
	fakes := c.StartFor(t)
	root, err := rootfs.New(dir)
	must(t, err)
	s := DefaultSettings()
	s.Root, s.NoRestart, s.IMDSEndpoint, s.ImageProfile = dir, true, fakes.IMDS.URL(), ProfileAL2023
	s.KubeletVersion = kubeletconf.Version{Major: 1, Minor: 35, Patch: 2}
	parts, err := userdata.Parse([]byte(doc))
	must(t, err)
	req, ok, err := RequestFromNodeConfigs(parts, nil, s)
	if err != nil || !ok {
		t.Fatalf("request: %v, %v", ok, err)
	}
	env := DefaultEnv(root, zap.NewNop(), &bytes.Buffer{}, &bytes.Buffer{})
	env.CPUs = c.CPUs
	env.Getenv = func(string) string { return "" }
	env.DNSNameAttempts, env.DNSNameInterval = 1, 0
	return runReadOnly(t, context.Background(), req.Config, env)
}

func nodeConfigDoc(t *testing.T, c goldencase.Case, kubeletConfig string) string {
	t.Helper()
	ca, err := os.ReadFile(filepath.Join(c.Dir, "etc/kubernetes/pki/ca.crt"))
	must(t, err)
	doc := "apiVersion: " + nodeconfig.APIVersion + "\nkind: " + nodeconfig.Kind + "\nspec:\n  cluster:\n    name: demo\n" +
		"    apiServerEndpoint: https://0123456789ABCDEF0123456789ABCDEF.gr7.us-west-2.eks.amazonaws.com\n" +
		"    certificateAuthority: " + b64(ca) + "\n    cidr: 10.100.0.0/16\n"
	if kubeletConfig != "" {
		doc += "  kubelet:\n    config:\n" + kubeletConfig
	}
	return doc
}

// TestTheKubeletsDropInDirectory: on AL2023 with a kubelet that reads one, the
// kubelet runs with --config-dir; spec.kubelet.config goes to nodeadm's drop-in and
// no longer into kubelet-config.json; the image's drop-ins are read, and the
// configuration the kubelet runs with merges them in its order; a stale drop-in of
// eksboot's is removed when the NodeConfig has no kubelet config; an image drop-in
// the kubelet would refuse is an error naming it.
func TestTheKubeletsDropInDirectory(t *testing.T) {
	c := base(t)
	dir := t.TempDir()
	writeNodeFile(t, dir, kubeletconf.ConfigDropInDir+"/10-image.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 200\nshutdownGracePeriod: 5m\n")
	writeNodeFile(t, dir, kubeletconf.ConfigDropInDir+"/90-image.conf", `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","registryPullQPS":7}`)
	writeNodeFile(t, dir, kubeletconf.ConfigDropInDir+"/README", "not read")
	must(t, runNodeConfig(t, c, dir, nodeConfigDoc(t, c, "      maxPods: 58\n      shutdownGracePeriodCriticalPods: 1m\n")))
	args := readFile(t, dir, "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf")
	if !strings.Contains(args, " --config-dir="+kubeletconf.ConfigDropInDir) {
		t.Errorf("no --config-dir: %s", args)
	}
	dropIn := readFile(t, dir, kubeletconf.NodeConfigDropInPath)
	if !strings.Contains(dropIn, `"maxPods": 58`) || !strings.Contains(dropIn, `"kind": "KubeletConfiguration"`) {
		t.Errorf("the NodeConfig's drop-in:\n%s", dropIn)
	}
	if k := kubeletConfig(t, dir); k["shutdownGracePeriodCriticalPods"] != "30s" {
		t.Errorf("kubelet-config.json has spec.kubelet.config's value: %v", k["shutdownGracePeriodCriticalPods"])
	}
	// logind must let the kubelet hold a shutdown for the image's 5 minutes.
	if logind := readFile(t, dir, "/etc/systemd/logind.conf.d/40-eksboot-shutdown.conf"); !strings.Contains(logind, "InhibitDelayMaxSec=300") {
		t.Errorf("logind drop-in:\n%s", logind)
	}

	must(t, runNodeConfig(t, c, dir, nodeConfigDoc(t, c, "")))
	if _, err := os.Stat(filepath.Join(dir, kubeletconf.NodeConfigDropInPath)); !os.IsNotExist(err) {
		t.Errorf("the stale drop-in is still there: %v", err)
	}

	writeNodeFile(t, dir, kubeletconf.ConfigDropInDir+"/sub/20-bad.conf", `{"apiVersion":"kubelet.config.k8s.io/v1","kind":"KubeletConfiguration"}`)
	err := runNodeConfig(t, c, dir, nodeConfigDoc(t, c, ""))
	if err == nil || !strings.Contains(err.Error(), kubeletconf.ConfigDropInDir+"/sub/20-bad.conf") || !strings.Contains(err.Error(), "apiVersion") {
		t.Errorf("err = %v, want one naming the drop-in and its apiVersion", err)
	}
}

// TestAL2KeepsOneKubeletConfigFile: bootstrap.sh's AL2 kubelet read
// kubelet-config.json alone: no --config-dir there, whatever the kubelet.
func TestAL2KeepsOneKubeletConfigFile(t *testing.T) {
	c := base(t)
	c.KubeletVersion = "v1.32.9-eks-113cf36"
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	must(t, rerunIn(t, c, dir))
	if args := readFile(t, dir, "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf"); strings.Contains(args, "--config-dir") {
		t.Errorf("AL2 got --config-dir: %s", args)
	}
}

func readFile(t *testing.T, dir, p string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, p))
	must(t, err)
	return string(b)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestTheNodesKubeletConfigIsJudgedAsTheKubeletWould: a key the user set in the
// node's kubelet-config.json before bootstrap.sh that the node's kubelet refuses (a
// feature gate it does not have) fails the run, naming the node's file, nothing
// written; in an image's drop-in, the drop-in.
func TestTheNodesKubeletConfigIsJudgedAsTheKubeletWould(t *testing.T) {
	c := base(t)
	var m map[string]any
	must(t, json.Unmarshal(assets.KubeletConfig, &m))
	m["featureGates"] = map[string]any{"RotateKubeletServerCertificate": true, "NoSuchGateAnywhere": true}
	b, _ := json.Marshal(m)
	c.Files = map[string]string{kubeletconf.ConfigPath: string(b)}
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	err := rerunIn(t, c, dir)
	if err == nil || !strings.Contains(err.Error(), "the node's "+kubeletconf.ConfigPath) || !strings.Contains(err.Error(), "NoSuchGateAnywhere") {
		t.Fatalf("err = %v, want one naming the node's file and the gate", err)
	}
	if got := filesUnder(t, dir); len(got) != 1 {
		t.Errorf("wrote %v", got)
	}

	dir = t.TempDir()
	writeNodeFile(t, dir, kubeletconf.ConfigDropInDir+"/10-image.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  NoSuchGateAnywhere: true\n")
	err = runNodeConfig(t, c, dir, nodeConfigDoc(t, c, ""))
	if err == nil || !strings.Contains(err.Error(), kubeletconf.ConfigDropInDir+"/10-image.conf") || !strings.Contains(err.Error(), "NoSuchGateAnywhere") {
		t.Fatalf("err = %v, want one naming the drop-in and the gate", err)
	}
}

// TestGoldenUserDataRebootWritesNothing: the golden cases whose user data edit
// kubelet-config.json (38, jq) or the kubeconfig template (39, sed) before
// bootstrap.sh (TestGolden compares the files with bootstrap.sh's): the edits stay,
// and a second run on the node, a reboot that runs it again, rewrites no file.
func TestGoldenUserDataRebootWritesNothing(t *testing.T) {
	for name, check := range map[string]func(t *testing.T, dir string){
		"38-jq-edit-before-bootstrap": func(t *testing.T, dir string) {
			if k := kubeletConfig(t, dir); k["registryPullQPS"] != 20.0 || k["containerLogMaxSize"] != "50Mi" {
				t.Fatalf("the user data's keys are gone: %v", k)
			}
		},
		"39-sed-kubeconfig-before-bootstrap": func(t *testing.T, dir string) {
			if kc := readFile(t, dir, kubeletconf.KubeconfigPath); !strings.Contains(kc, "command: /opt/iam/bin/aws-iam-authenticator") || !strings.Contains(kc, "- --role\n") {
				t.Fatalf("the user data's edits of the kubeconfig are gone:\n%s", kc)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			c, err := goldencase.Load(filepath.Join(goldenDir, name))
			must(t, err)
			if c.UserData == "" || len(c.Files) == 0 {
				t.Fatal("the case has no user data or no file it left")
			}
			dir := t.TempDir()
			must(t, c.WriteFiles(dir))
			must(t, rerunIn(t, c, dir))
			check(t, dir)
			before := inodes(t, dir)
			must(t, rerunIn(t, c, dir))
			for p, ino := range inodes(t, dir) {
				if before[p] != ino {
					t.Errorf("the second run rewrote %s", p)
				}
			}
		})
	}
}

// TestTheNodesKubeconfigTemplateIsTheBase: a kubeconfig template the user data
// edited is filled in as bootstrap.sh's sed filled it, and kept beside the file: a
// run with another endpoint fills the kept template again (bootstrap.sh's second run
// could not, its placeholders consumed); a kubeconfig of the node's own without
// placeholders is replaced by eksboot's, and the record removed.
func TestTheNodesKubeconfigTemplateIsTheBase(t *testing.T) {
	c, err := goldencase.Load(filepath.Join(goldenDir, "39-sed-kubeconfig-before-bootstrap"))
	must(t, err)
	dir := t.TempDir()
	must(t, c.WriteFiles(dir))
	must(t, rerunIn(t, c, dir))
	other := c
	other.Args = append([]string{}, c.Args...)
	for i, a := range other.Args {
		if a == "--apiserver-endpoint" {
			other.Args[i+1] = "https://other.example.com"
		}
	}
	must(t, rerunIn(t, other, dir))
	kc := readFile(t, dir, kubeletconf.KubeconfigPath)
	if !strings.Contains(kc, "server: https://other.example.com\n") || !strings.Contains(kc, "/opt/iam/bin/aws-iam-authenticator") {
		t.Errorf("the kept template, filled in with the new endpoint:\n%s", kc)
	}
	writeNodeFile(t, dir, kubeletconf.KubeconfigPath, "apiVersion: v1\nkind: Config\n")
	must(t, rerunIn(t, c, dir))
	if kc := readFile(t, dir, kubeletconf.KubeconfigPath); strings.Contains(kc, "/opt/iam") || !strings.Contains(kc, "/usr/bin/aws-iam-authenticator") {
		t.Errorf("a kubeconfig without placeholders: want eksboot's\n%s", kc)
	}
	if _, err := os.Stat(filepath.Join(dir, KubeconfigBasePath)); !os.IsNotExist(err) {
		t.Errorf("the record of the template is still there: %v", err)
	}
}
