package doctor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/bootstrap"
	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/kubeletconf"
)

// exportStart is when the recorded journal exports of testdata begin.
var exportStart = time.UnixMicro(1764590000000000 - 1000000)

// TestHealthyNodeHasNoFailure: on a node where everything is right every check is ok
// (the hop limit is measured only as root: its raw socket needs CAP_NET_RAW).
func TestHealthyNodeHasNoFailure(t *testing.T) {
	n := newNode(t)
	r := n.run()
	if r.Failed() || r.Summary.Warn > 0 && (os.Geteuid() == 0 || r.Summary.Warn != 1) {
		t.Errorf("a healthy node: %+v\n%s", r.Summary, text(t, r))
	}
	for _, c := range []string{
		"imds.token", "imds.credentials", "eksboot.last-run", "eksboot.files", "api.dns", "api.tcp", "api.tls",
		"api.clock", "identity.exec-plugin", "identity.api", "identity.kubelet-journal", "runtime.containerd", "runtime.kubelet",
		"runtime.cri", "runtime.cni", "runtime.disk-nodefs", "runtime.disk-imagefs", "runtime.max-pods",
	} {
		want(t, r, c, OK)
	}
	want(t, r, "imds.token", OK, "i-0123456789abcdef0, m5.large in us-west-2")
	want(t, r, "imds.credentials", OK, "eks-node-role", "arn:aws:iam::111122223333:role/eks-node-role")
	want(t, r, "identity.api", OK, "system:node:ip-192-168-45-67.us-west-2.compute.internal")
	want(t, r, "runtime.cri", OK, "containerd v1.7.27")
	want(t, r, "runtime.max-pods", OK, "max pods 29", "3 ENIs of 10 IPv4 addresses")
	if os.Geteuid() == 0 {
		want(t, r, "imds.hop-limit", OK, "hop limit 2")
	}
	if r.Node != "i-0123456789abcdef0 (m5.large, us-west-2)" {
		t.Errorf("node %q", r.Node)
	}
}

// TestIMDSThatRefusesTokens: a 403 on the token request fails imds.token, names the
// metadata options, and the checks that need IMDS are not run on made-up facts.
func TestIMDSThatRefusesTokens(t *testing.T) {
	n := newNode(t)
	n.imds.SetFaults("latest/api/token", imdstest.Fault{Kind: imdstest.FaultStatus, Status: 403})
	r := n.run()
	want(t, r, "imds.token", Fail, "refuses a session token (HTTP 403)", "--http-endpoint enabled")
	for _, res := range r.Results {
		if res.Check == "imds.credentials" || res.Check == "runtime.max-pods" {
			t.Errorf("%s ran without IMDS: %s", res.Check, res.Evidence)
		}
	}
}

// TestIMDSThatHangs: no answer within the check's deadline fails imds.token.
func TestIMDSThatHangs(t *testing.T) {
	n := newNode(t)
	n.imds.SetHang("latest/api/token", true)
	r := n.run()
	want(t, r, "imds.token", Fail, "no answer from "+n.imds.URL()+" within 2s")
}

// TestHopLimitOne: a hop limit of 1 is a warning with the command that raises it
// (root only: the TTL is read from a raw socket).
func TestHopLimitOne(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the hop limit is read with a raw socket: root only")
	}
	n := newNode(t)
	n.imds.SetHopLimit(1)
	r := n.run()
	want(t, r, "imds.hop-limit", Warn, "hop limit 1", "aws ec2 modify-instance-metadata-options --instance-id i-0123456789abcdef0 --http-put-response-hop-limit 2")
	n.imds.SetHopLimit(3)
	want(t, n.run(), "imds.hop-limit", OK, "hop limit 3")
}

// TestInstanceProfileCredentials: no instance profile, credentials IMDS refuses,
// expired and soon-expiring ones.
func TestInstanceProfileCredentials(t *testing.T) {
	n := newNode(t)
	n.imds.SetOverride("latest/meta-data/iam/security-credentials/", nil)
	want(t, n.run(), "imds.credentials", Fail, "no instance profile", "associate-iam-instance-profile")

	role := roleName
	n.imds.SetOverride("latest/meta-data/iam/security-credentials/", &role)
	for _, tc := range []struct {
		creds  string
		status Status
		sub    string
	}{
		{`{"Code":"AssumeRoleUnauthorizedAccess","Message":"EC2 cannot assume the role"}`, Fail, "AssumeRoleUnauthorizedAccess"},
		{`{"Code":"Success","AccessKeyId":"` + accessKey + `","SecretAccessKey":"` + secretKey + `","Token":"` + sessionTok + `","Expiration":"2020-01-01T00:00:00Z"}`, Fail, "expired at 2020-01-01T00:00:00Z"},
		{`{"Code":"Success","AccessKeyId":"` + accessKey + `","SecretAccessKey":"` + secretKey + `","Token":"` + sessionTok + `","Expiration":"` + time.Now().Add(2*time.Minute).UTC().Format(time.RFC3339) + `"}`, Warn, "credentials expire in"},
		// Expired credentials with a second, later expiry: the decoder would keep the later.
		{`{"Code":"Success","AccessKeyId":"` + accessKey + `","SecretAccessKey":"` + secretKey + `","Token":"` + sessionTok + `","Expiration":"2020-01-01T00:00:00Z","Expiration":"` + time.Now().Add(6*time.Hour).UTC().Format(time.RFC3339) + `"}`, Fail, "are not strict JSON: Expiration: a key given twice"},
	} {
		creds := tc.creds
		n.imds.SetOverride("latest/meta-data/iam/security-credentials/"+role, &creds)
		r := n.run()
		want(t, r, "imds.credentials", tc.status, tc.sub)
		checkNoSecrets(t, r)
	}
}

// TestAPIServerOfAnotherCluster: an API server whose certificate another CA signed
// fails api.tls, saying the CA belongs to another cluster.
func TestAPIServerOfAnotherCluster(t *testing.T) {
	n := newNode(t)
	other := newCA(t, "kubernetes")
	n.api = startAPIServer(t, other)
	n.write(KubeconfigPath, strings.Replace(n.read(KubeconfigPath), ":"+portOf(t, n)+"\n", ":"+n.api.port()+"\n", 1), 0o644)
	r := n.run()
	want(t, r, "api.tls", Fail, "not signed by the node's CA", "the CA in the user data belongs to another cluster", "certificateAuthority.data",
		fmt.Sprintf("authority key ID %x…", other.cert.SubjectKeyId[:6]), fmt.Sprintf("key ID %x…", n.ca.cert.SubjectKeyId[:6]))
	if res := result(t, r, "api.tcp"); res.Status != OK {
		t.Errorf("api.tcp: %s", res.Evidence)
	}
	for _, res := range r.Results {
		if res.Check == "identity.api" || res.Check == "api.clock" {
			t.Errorf("%s ran over an unverified connection: %s", res.Check, res.Evidence)
		}
	}
	checkNoSecrets(t, r)
}

// TestAPIServerThatHangs: TCP connects but TLS never answers.
func TestAPIServerThatHangs(t *testing.T) {
	n := newNode(t)
	port := hangingServer(t)
	n.write(KubeconfigPath, strings.Replace(n.read(KubeconfigPath), ":"+n.api.port()+"\n", ":"+port+"\n", 1), 0o644)
	r := n.run()
	want(t, r, "api.tcp", OK)
	want(t, r, "api.tls", Fail, "accepts TCP but the TLS handshake got no answer within 2s")
}

// TestAPIServerUnreachable: a dial that never connects names security groups, NACLs
// and the endpoint's private access.
func TestAPIServerUnreachable(t *testing.T) {
	n := newNode(t)
	n.env.Dialer = hangingDialer{}
	r := n.run()
	want(t, r, "api.tcp", Fail, "no answer from 127.0.0.1:"+n.api.port()+" within 2s", "security groups", "network ACLs", "private endpoint access")
}

// TestAPIServerThatDoesNotResolve: DNS fails api.dns.
func TestAPIServerThatDoesNotResolve(t *testing.T) {
	n := newNode(t)
	n.env.Resolver = fakeResolver{}
	want(t, n.run(), "api.dns", Fail, apiHost+" does not resolve", "enableDnsHostnames")
}

// TestClockSkew: a node clock 10 minutes ahead fails api.clock; 2 minutes warns.
func TestClockSkew(t *testing.T) {
	n := newNode(t)
	n.skew = 10 * time.Minute
	want(t, n.run(), "api.clock", Fail, "ahead of the API server's", "SigV4")
	n.skew = -2 * time.Minute
	want(t, n.run(), "api.clock", Warn, "behind the API server's")
}

// TestExecPluginThatFails: the kubeconfig's plugin exits 1: its error is shown, the
// token check is not run.
func TestExecPluginThatFails(t *testing.T) {
	n := newNode(t)
	n.write("/usr/bin/aws-iam-authenticator", "#!/bin/sh\necho 'could not get token: NoCredentialProviders: no valid providers in chain' >&2\nexit 1\n", 0o755)
	r := n.run()
	want(t, r, "identity.exec-plugin", Fail, "aws-iam-authenticator token -i doctor-test --region us-west-2 failed: exit status 1", "NoCredentialProviders")
	for _, res := range r.Results {
		if res.Check == "identity.api" {
			t.Errorf("identity.api ran without a token: %s", res.Evidence)
		}
	}
	must(t, os.Remove(filepath.Join(n.dir, "usr/bin/aws-iam-authenticator")))
	want(t, n.run(), "identity.exec-plugin", Fail, "file does not exist")
}

// TestTokenThatTheAPIServerRefuses: 401 names the role and the two ways to map it.
func TestTokenThatTheAPIServerRefuses(t *testing.T) {
	n := newNode(t)
	n.api.refuse = true
	r := n.run()
	want(t, r, "identity.api", Fail, "401 Unauthorized", "arn:aws:iam::111122223333:role/eks-node-role", "aws-auth", "create-access-entry")
	if !n.api.sawToken {
		t.Error("the API server never saw the plugin's token")
	}
	checkNoSecrets(t, r)
}

// TestKubeletJournalWithUnauthorizedLines: the kubelet's Unauthorized lines (a
// recorded journal export) fail identity.kubelet-journal, naming the role.
func TestKubeletJournalWithUnauthorizedLines(t *testing.T) {
	n := newNode(t)
	n.journal.entries["kubelet.service"] = loadExport(t, "kubelet-unauthorized.json")
	u := n.units.units["kubelet.service"]
	u.ActiveEnter = exportStart
	n.units.units["kubelet.service"] = u
	r := n.run()
	res := want(t, r, "identity.kubelet-journal", Fail, "4 Unauthorized lines", "arn:aws:iam::111122223333:role/eks-node-role", "EC2_LINUX")
	if !strings.Contains(res.Detail, `"Unable to register node with API server" err="Unauthorized"`) {
		t.Errorf("the detail does not show the lines:\n%s", res.Detail)
	}
	// The kubelet's configuration, which it logs at start, names cacheUnauthorizedTTL:
	// not a refusal.
	n.journal.entries["kubelet.service"] = append(n.journal.entries["kubelet.service"],
		JournalEntry{Time: time.Now(), Message: "\t    cacheUnauthorizedTTL: 30s"})
	want(t, n.run(), "identity.kubelet-journal", Fail, "4 Unauthorized lines")
	// Lines from before the kubelet's last start are not held against it.
	u.ActiveEnter = time.Now()
	n.units.units["kubelet.service"] = u
	want(t, n.run(), "identity.kubelet-journal", OK)

	n.journal.entries["kubelet.service"] = []JournalEntry{
		{Time: time.Now(), Message: `E1201 "Unhandled Error" err="pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\""`},
	}
	u.ActiveEnter = time.Now().Add(-time.Minute)
	n.units.units["kubelet.service"] = u
	want(t, n.run(), "identity.kubelet-journal", Fail, "forbidden to system:anonymous")
	n.journal.entries["kubelet.service"] = []JournalEntry{
		{Time: time.Now(), Message: `E1201 err="secrets \"x\" is forbidden: User \"system:node:ip-1\" cannot get resource \"secrets\": no relationship found between node 'ip-1' and this object"`},
	}
	want(t, n.run(), "identity.kubelet-journal", OK)
}

// TestWhatEksbootWrote: a hand-edited kubelet-config.json is shown as a diff, a
// missing file fails, a failed last run fails, no record warns.
func TestWhatEksbootWrote(t *testing.T) {
	n := newNode(t)
	cfg := n.read(KubeletConfigPath)
	n.write(KubeletConfigPath, strings.Replace(cfg, `"maxPods":29`, `"maxPods":250`, 1), 0o644)
	r := n.run()
	res := want(t, r, "eksboot.files", Warn, KubeletConfigPath, "edited them by hand")
	if !strings.Contains(res.Detail, `-{"kind":"KubeletConfiguration","apiVersion":"kubelet.config.k8s.io/v1beta1","maxPods":29`) ||
		!strings.Contains(res.Detail, `"maxPods":250`) {
		t.Errorf("no diff of the edit:\n%s", res.Detail)
	}
	n.write(KubeletConfigPath, cfg, 0o644)
	n.write(KubeconfigPath, n.read(KubeconfigPath)+"# edited\n", 0o644)
	res = want(t, n.run(), "eksboot.files", Warn, KubeconfigPath, "eksboot keeps only the digest")

	must(t, os.Remove(filepath.Join(n.dir, "etc/kubernetes/pki/ca.crt")))
	want(t, n.run(), "eksboot.files", Fail, "1 of the 4 files eksboot wrote are gone: /etc/kubernetes/pki/ca.crt")

	n.writeStatus(nil, `instance facts: imds: latest/api/token: HTTP 403`)
	want(t, n.run(), "eksboot.last-run", Fail, "failed: instance facts: imds: latest/api/token: HTTP 403")
	must(t, os.Remove(filepath.Join(n.dir, "var/lib/eksboot/status.json")))
	want(t, n.run(), "eksboot.last-run", Warn, "no record of an eksboot run")
}

// TestKubeletStartOrder: init's recorded order is reported, with when the kubelet
// and cloud-final became active; a run that recorded none (bootstrap.sh's) shows no
// such check.
func TestKubeletStartOrder(t *testing.T) {
	n := newNode(t)
	for _, res := range n.run().Results {
		if res.Check == "eksboot.kubelet-start" {
			t.Errorf("eksboot.kubelet-start without a recorded order: %s", res.Evidence)
		}
	}
	s, err := bootstrap.ReadStatus(n.root)
	must(t, err)
	s.KubeletStart = "before cloud-final: the user data has only NodeConfig parts (2), which cloud-init does not run"
	must(t, bootstrap.WriteStatus(n.root, s))
	units := n.units.units
	kubelet := units["kubelet.service"]
	units["cloud-final.service"] = UnitState{LoadState: "loaded", ActiveState: "active", SubState: "exited", Result: "success", ActiveEnter: kubelet.ActiveEnter.Add(2500 * time.Millisecond)}
	want(t, n.run(), "eksboot.kubelet-start", OK,
		"the kubelet starts before cloud-final: the user data has only NodeConfig parts (2), which cloud-init does not run; this boot: the kubelet active since ",
		", 2.5s before cloud-final ended (")
}

// TestUnitsThatFailed: a failed kubelet shows its state and the last error of its
// journal (a recorded export with a line journald stored as bytes).
func TestUnitsThatFailed(t *testing.T) {
	n := newNode(t)
	n.units.units["kubelet.service"] = UnitState{LoadState: "loaded", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainStatus: 1, NRestarts: 12, ActiveEnter: time.Now().Add(-time.Hour)}
	n.journal.entries["kubelet.service"] = loadExport(t, "kubelet-bad-flag.json")
	r := n.run()
	res := want(t, r, "runtime.kubelet", Fail, "activating (auto-restart), result exit-code, main process status 1, restarted 12 times",
		`unknown flag: --e2e-no-such-flag`)
	if !strings.Contains(res.Fix, `The kubelet refused its flag "e2e-no-such-flag"`) {
		t.Errorf("the fix does not name the refused flag: %s", res.Fix)
	}
	if !strings.Contains(res.Detail, "kubelet.service: Failed with result 'exit-code'.") {
		t.Errorf("the detail lacks systemd's line:\n%s", res.Detail)
	}
	delete(n.units.units, "containerd.service")
	want(t, n.run(), "runtime.containerd", Fail, "containerd.service does not exist")
	n.units.units["containerd.service"] = UnitState{LoadState: "loaded", ActiveState: "active", SubState: "running", NRestarts: 4, ActiveEnter: time.Now()}
	want(t, n.run(), "runtime.containerd", Warn, "restarted 4 times")
}

// TestCRISocketThatDoesNotAnswer: no socket, or a file that is not one.
func TestCRISocketThatDoesNotAnswer(t *testing.T) {
	n := newNode(t)
	sock := filepath.Join(n.dir, "run/containerd/containerd.sock")
	must(t, os.Remove(sock))
	want(t, n.run(), "runtime.cri", Fail, "does not answer: no such socket")
	must(t, os.WriteFile(sock, nil, 0o644))
	want(t, n.run(), "runtime.cri", Fail, "does not answer")
}

// TestNoCNIConfiguration: NetworkNotReady; a warning while the kubelet is young.
func TestNoCNIConfiguration(t *testing.T) {
	n := newNode(t)
	must(t, os.Remove(filepath.Join(n.dir, "etc/cni/net.d/10-aws.conflist")))
	want(t, n.run(), "runtime.cni", Fail, "NetworkNotReady", "aws-node")
	u := n.units.units["kubelet.service"]
	u.ActiveEnter = time.Now().Add(-time.Minute)
	n.units.units["kubelet.service"] = u
	want(t, n.run(), "runtime.cni", Warn, "aws-node may still be starting")
}

// TestDiskPressure: free space and inodes against the kubelet's eviction thresholds.
func TestDiskPressure(t *testing.T) {
	n := newNode(t)
	n.statfs.st = FSStats{Bytes: 100 << 30, BytesFree: 5 << 30, Inodes: 1 << 20, InodesFree: 900 << 10}
	r := n.run()
	want(t, r, "runtime.disk-nodefs", Fail, "5.0 GiB free (5%)", "eviction below 10%", "DiskPressure")
	want(t, r, "runtime.disk-imagefs", Fail, "eviction below 15%")
	n.statfs.st = FSStats{Bytes: 100 << 30, BytesFree: 60 << 30, Inodes: 1000, InodesFree: 10}
	want(t, n.run(), "runtime.disk-nodefs", Fail, "10 inodes free (1%)", "eviction below 5%")
	n.statfs.st = FSStats{Bytes: 100 << 30, BytesFree: 20 << 30, Inodes: 1000, InodesFree: 900}
	want(t, n.run(), "runtime.disk-imagefs", Warn, "close to the eviction threshold")
}

// TestMaxPodsAboveTheENIs: 110 pods on an m5.large (29 addresses) warns; --max-pods
// in a drop-in is the kubelet's value.
func TestMaxPodsAboveTheENIs(t *testing.T) {
	n := newNode(t)
	n.write(kubeletDropIns+"/30-kubelet-extra-args.conf", "[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--max-pods=110'\n", 0o644)
	want(t, n.run(), "runtime.max-pods", Warn, "max pods 110 ("+kubeletDropIns+"/30-kubelet-extra-args.conf)", "pods beyond 29", "ENABLE_PREFIX_DELEGATION")
}

// TestSecretsNeverShown: neither the IMDS session token, the credentials, the
// kubelet's token nor the CA's body appear in the text or JSON output, whatever
// failed.
func TestSecretsNeverShown(t *testing.T) {
	n := newNode(t)
	checkNoSecrets(t, n.run())
	n.write("/usr/bin/aws-iam-authenticator", "#!/bin/sh\necho \"token "+nodeToken+" rejected; key "+secretKey+"\" >&2\nexit 3\n", 0o755)
	r := n.run()
	want(t, r, "identity.exec-plugin", Fail, "(redacted)")
	checkNoSecrets(t, r)
}

// checkNoSecrets fails when any secret of the node shows in the report.
func checkNoSecrets(t *testing.T, r *Report) {
	t.Helper()
	out := text(t, r) + jsonOf(t, r)
	for _, s := range []string{nodeToken, accessKey, secretKey, sessionTok, imdstest.Token, "BEGIN CERTIFICATE"} {
		if strings.Contains(out, s) {
			t.Errorf("the output shows a secret %.12s…:\n%s", s, out)
		}
	}
	m := decode(t, jsonOf(t, r))
	if _, ok := m["checks"].([]any); !ok {
		t.Errorf("the JSON has no checks: %v", m)
	}
}

// TestJournalExportParses: the recorded exports, a field stored as bytes included.
func TestJournalExportParses(t *testing.T) {
	es := loadExport(t, "kubelet-bad-flag.json")
	if len(es) != 5 || es[1].Identifier != "kubelet" || !strings.Contains(es[1].Message, "Kubelet version") || es[2].Priority != 3 ||
		!es[0].Time.Equal(time.UnixMicro(1764590600000000)) {
		t.Errorf("parsed %+v", es)
	}
	if _, err := ParseJournalJSON([]byte("{\"MESSAGE\":\"a\"}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line: %v", err)
	}
}

func (n *node) read(p string) string {
	n.t.Helper()
	b, err := n.root.ReadFileLimit(p, 1<<20)
	must(n.t, err)
	return string(b)
}

func portOf(t *testing.T, n *node) string {
	t.Helper()
	kc := n.read(KubeconfigPath)
	i := strings.Index(kc, apiHost+":")
	rest := kc[i+len(apiHost)+1:]
	return rest[:strings.IndexByte(rest, '\n')]
}

// TestKubeletRefusalNamesTheInput: the kubelet's own refusal at start (an unknown
// flag, a gate, a configuration field) is named with the file, and so the input,
// that carries the value.
func TestKubeletRefusalNamesTheInput(t *testing.T) {
	for _, tc := range []struct {
		line, file, content, want string
	}{
		{
			`E1201 12:10:00.1 2345 run.go:72] "command failed" err="failed to parse kubelet flag: unknown flag: --network-plugin"`,
			"etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf", "[Service]\nEnvironment='KUBELET_EXTRA_ARGS=--network-plugin=cni'\n",
			`The kubelet refused its flag "network-plugin", which comes from the user's kubelet arguments (--kubelet-extra-args or spec.kubelet.flags) (/etc/systemd/system/kubelet.service.d/30-kubelet-extra-args.conf)`,
		},
		{
			`panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: unrecognized feature gate: DynamicResourceAllocation`,
			"etc/kubernetes/kubelet/kubelet-config.json", `{"featureGates":{"DynamicResourceAllocation":true}}`,
			`The kubelet refused its feature gate "DynamicResourceAllocation", which comes from kubelet-config.json`,
		},
		{
			`E1201 12:10:00.1 2345 run.go:72] "command failed" err="failed to run Kubelet: unsupported eviction signal memory.availble"`,
			"etc/kubernetes/kubelet/kubelet-config.json", `{"evictionHard":{"memory.availble":"100Mi"}}`,
			`The kubelet refused its eviction signal "memory.availble", which comes from kubelet-config.json`,
		},
	} {
		n := newNode(t)
		p := filepath.Join(n.dir, tc.file)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(tc.content), 0o644))
		n.units.units["kubelet.service"] = UnitState{LoadState: "loaded", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainStatus: 1, NRestarts: 3, ActiveEnter: time.Now().Add(-time.Minute)}
		n.journal.entries["kubelet.service"] = []JournalEntry{{Time: time.Now(), Identifier: "kubelet", Priority: 3, Message: tc.line}}
		res := want(t, n.run(), "runtime.kubelet", Fail, "restarted 3 times")
		if !strings.Contains(res.Fix, tc.want) {
			t.Errorf("%s: fix %q, want it to say %q", tc.line, res.Fix, tc.want)
		}
	}
}

// TestKubeletConfigDropIns: when the kubelet runs with --config-dir, doctor shows
// the configuration it runs with (kubelet-config.json with the drop-ins over it, in
// the kubelet's order) and checks that one: a drop-in's maxPods is the kubelet's; a
// drop-in the kubelet would refuse fails, naming it.
func TestKubeletConfigDropIns(t *testing.T) {
	n := newNode(t)
	n.write(kubeletDropIns+"/10-kubelet-args.conf", "[Service]\nEnvironment='KUBELET_ARGS=--node-ip=192.168.45.67 --v=2 --config-dir="+kubeletconf.ConfigDropInDir+"'\n", 0o644)
	n.write(kubeletconf.ConfigDropInDir+"/40-nodeadm.conf", `{"apiVersion":"kubelet.config.k8s.io/v1beta1","kind":"KubeletConfiguration","maxPods":58}`, 0o644)
	n.write(kubeletconf.ConfigDropInDir+"/90-image.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 110\nevictionHard:\n  imagefs.available: 30%\n", 0o644)
	r := n.run()
	res := want(t, r, "runtime.kubelet-config", OK, "2 drop-ins of "+kubeletconf.ConfigDropInDir, "40-nodeadm.conf, 90-image.conf")
	for _, s := range []string{`"maxPods": 110`, `"imagefs.available": "30%"`, `"memory.available": "100Mi"`} {
		if !strings.Contains(res.Detail, s) {
			t.Errorf("the configuration shown lacks %s:\n%s", s, res.Detail)
		}
	}
	want(t, r, "runtime.max-pods", Warn, "max pods 110")
	want(t, r, "runtime.disk-imagefs", OK, "eviction below 30%")

	// The kubelet's own refusal of a drop-in's gate names the drop-in.
	n.write(kubeletconf.ConfigDropInDir+"/90-image.conf", "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  NoSuchGateAnywhere: true\n", 0o644)
	n.units.units["kubelet.service"] = UnitState{LoadState: "loaded", ActiveState: "activating", SubState: "auto-restart", Result: "exit-code", ExecMainStatus: 1, NRestarts: 3, ActiveEnter: time.Now().Add(-time.Minute)}
	n.journal.entries["kubelet.service"] = []JournalEntry{{Time: time.Now(), Identifier: "kubelet", Priority: 3, Message: `E1201 12:10:00.1 2345 run.go:72] "command failed" err="failed to set feature gates from initial flags-based config: unrecognized feature gate: NoSuchGateAnywhere"`}}
	if res := want(t, n.run(), "runtime.kubelet", Fail, "restarted 3 times"); !strings.Contains(res.Fix, "a drop-in of the kubelet's configuration directory ("+kubeletconf.ConfigDropInDir+"/90-image.conf)") {
		t.Errorf("fix %q: want it to name the drop-in", res.Fix)
	}
	delete(n.journal.entries, "kubelet.service")
	n.units.units["kubelet.service"] = UnitState{LoadState: "loaded", ActiveState: "active", SubState: "running", Result: "success", ActiveEnter: time.Now().Add(-time.Hour)}

	n.write(kubeletconf.ConfigDropInDir+"/95-bad.conf", "maxPods: 3\n", 0o644)
	want(t, n.run(), "runtime.kubelet-config", Fail, kubeletconf.ConfigDropInDir+"/95-bad.conf", "apiVersion: missing", "Fix or remove")

	// Without --config-dir the kubelet reads kubelet-config.json alone.
	n.write(kubeletDropIns+"/10-kubelet-args.conf", "[Service]\nEnvironment='KUBELET_ARGS=--node-ip=192.168.45.67 --v=2'\n", 0o644)
	r = n.run()
	for _, res := range r.Results {
		if res.Check == "runtime.kubelet-config" {
			t.Errorf("no --config-dir, yet %+v", res)
		}
	}
	want(t, r, "runtime.max-pods", OK, "max pods 29")
}
