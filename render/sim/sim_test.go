package sim

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/eksboot/eksboot/userdata"
)

func script(s string) []userdata.Part {
	return []userdata.Part{{Index: 1, ContentType: userdata.TypeShellScript, Body: []byte(s)}}
}

// testShim is the shape of the image's shim that matters here: the line eksctl's sed
// edits, then the exec of eksboot.
const testShim = `#!/bin/sh
set -eu
n=$#
while [ "$n" -gt 0 ]; do
	case $1 in
	--kubelet-extra-args)
		KUBELET_EXTRA_ARGS=$2
		set -- "$@" "$1" "$KUBELET_EXTRA_ARGS"
		shift 2
		n=$((n - 2))
		;;
	*)
		set -- "$@" "$1"
		shift
		n=$((n - 1))
		;;
	esac
done
exec /usr/bin/eksboot bootstrap "$@"
`

func testMetadata(p string) (string, bool) {
	v, ok := map[string]string{
		"meta-data/instance-id":         "i-0123456789abcdef0",
		"meta-data/instance-life-cycle": "spot",
		"meta-data/placement/region":    "eu-west-1",
	}[p]
	return v, ok
}

func evaluate(t *testing.T, parts []userdata.Part, opts Options) *Evaluation {
	t.Helper()
	if opts.Image == nil {
		opts.Image = map[string]File{BootstrapPath: {Data: []byte(testShim), Mode: 0o755}}
	}
	if opts.Metadata == nil {
		opts.Metadata = testMetadata
	}
	ev, err := Evaluate(context.Background(), parts, opts)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestEvaluateSimulatesTheNode(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		eksboot  []string
	}{
		{"IMDS by curl with a token", `TOKEN=$(curl -s -X PUT -H "X-aws-ec2-metadata-token-ttl-seconds: 60" http://169.254.169.254/latest/api/token)
ID=$(curl -s -H "X-aws-ec2-metadata-token: $TOKEN" http://169.254.169.254/latest/meta-data/instance-id)
/etc/eks/bootstrap.sh c --kubelet-extra-args "--node-labels=id=$ID"`, []string{"c", "--kubelet-extra-args", "--node-labels=id=i-0123456789abcdef0"}},
		{"IMDS by wget, ec2-metadata and imds", `A=$(wget -q -O - http://169.254.169.254/latest/meta-data/placement/region)
B=$(ec2-metadata --instance-id | cut -d' ' -f2)
C=$(imds /latest/meta-data/instance-life-cycle)
/etc/eks/bootstrap.sh c "$A" "$B" "$C"`, []string{"c", "eu-west-1", "i-0123456789abcdef0", "spot"}},
		{"eksctl's sed hook edits the shim", `sed -i 's/KUBELET_EXTRA_ARGS=$2/KUBELET_EXTRA_ARGS="$2 --max-pods=58"/' /etc/eks/bootstrap.sh
/etc/eks/bootstrap.sh c --kubelet-extra-args '--a=1'`, []string{"c", "--kubelet-extra-args", "--a=1 --max-pods=58"}},
		{"a file written, then read by cat and sed", `cat > /etc/x.env <<EOF
LABELS=a=1
EOF
echo "LABELS2=b=2" >> /etc/x.env
L=$(sed -n 's/^LABELS2=//p' /etc/x.env)
/etc/eks/bootstrap.sh c "$(cat /etc/x.env | head -1)" "$L"`, []string{"c", "LABELS=a=1", "b=2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := evaluate(t, script(tc.in), Options{})
			if len(ev.Calls) != 1 {
				t.Fatalf("%d calls", len(ev.Calls))
			}
			if c := ev.Calls[0]; !reflect.DeepEqual(c.Eksboot, tc.eksboot) || len(c.Unknown) > 0 {
				t.Errorf("eksboot got %q (unknown %q), want %q", c.Eksboot, c.Unknown, tc.eksboot)
			}
		})
	}
}

func TestEvaluateReportsWhatIsKnownOnlyAtBoot(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"a program not simulated", "X=$(aws ssm get-parameter --name p)\n/etc/eks/bootstrap.sh \"$X\"", "the output of aws ssm get-parameter --name p (part 1 (text/x-shellscript) line 1)"},
		{"an IMDS path the instance lacks", "T=$(curl -s http://169.254.169.254/latest/meta-data/tags/instance/Name)\n/etc/eks/bootstrap.sh c --k $T", "IMDS meta-data/tags/instance/Name"},
		{"a download", "/etc/eks/bootstrap.sh c --k \"$(curl -s https://example.com/flags)\"", "the answer of https://example.com/flags"},
		{"through a file", "echo '{}' > /etc/conf.json\nyq -r '.name' /etc/conf.json > /tmp/name\n/etc/eks/bootstrap.sh \"$(cat /tmp/name)\"", "the output of yq -r .name /etc/conf.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := evaluate(t, script(tc.in), Options{})
			if len(ev.Calls) != 1 || len(ev.Calls[0].Unknown) != 1 || !strings.Contains(ev.Calls[0].Unknown[0], tc.want) {
				t.Fatalf("calls %+v; want one whose words depend on %q", ev.Calls, tc.want)
			}
			_, err := FindBootstrapCall(script(tc.in))
			var ue *UnresolvedError
			if !errors.As(err, &ue) || !strings.Contains(err.Error(), "known only when the node boots") {
				t.Errorf("FindBootstrapCall: %v", err)
			}
		})
	}
	ev := evaluate(t, script("systemctl restart foo\nyum install -y jq\nyq keys /x\n/etc/eks/bootstrap.sh c\n"), Options{})
	if want := []string{"systemctl", "yum", "yq"}; !reflect.DeepEqual(ev.NotSimulated, want) {
		t.Errorf("not simulated %q, want %q", ev.NotSimulated, want)
	}
}

// TestEvaluateQuotesTheScriptsOwnText: what render shows of a script is the
// script's text, valid UTF-8 when cut: the marks the parse tree carries for the
// interpreter (deferTruncation's on a > inside a dropped >(...)) are not shown
// (Karpenter's AL2 user data logs through >(tee ... | logger -s 2>/dev/console)).
func TestEvaluateQuotesTheScriptsOwnText(t *testing.T) {
	ev := evaluate(t, script("exec > >(tee /var/log/user-data.log | logger -t user-data -s 2>/dev/console) 2>&1\n/etc/eks/bootstrap.sh c\n"), Options{})
	want := ">(tee /var/log/user-data.log | logger -t user-data -s 2>/dev…"
	if len(ev.NotSimulated) != 1 || !strings.HasPrefix(ev.NotSimulated[0], want) || !utf8.ValidString(ev.NotSimulated[0]) {
		t.Errorf("not simulated %q, want one starting %q", ev.NotSimulated, want)
	}
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{{"abc", 3, "abc"}, {"abcd", 3, "abc…"}, {"aé", 2, "a…"}, {"éé", 3, "é…"}, {"日本", 1, "…"}} {
		if got := shorten(tc.in, tc.n); got != tc.want {
			t.Errorf("shorten(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

// TestEvaluateBounds: an endless loop, a flood of output and scripts starting
// themselves all end with a clear message, quickly.
func TestEvaluateBounds(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		limits   Limits
		want     string
	}{
		{"endless loop of commands", "while true; do :; done", Limits{Steps: 10_000}, "more than 10000 commands run"},
		{"endless loop without commands", "while [[ 1 ]]; do ((i++)); done", Limits{Time: 200 * time.Millisecond}, "still running after 200ms"},
		{"a variable doubling", "x=x; while [[ 1 ]]; do x=$x$x; done", Limits{Vars: 1 << 20}, "variables holding more than 1048576 bytes"},
		{"a flood of output", "while true; do echo xxxxxxxxxxxxxxxxxxxx >> /tmp/f; done", Limits{Output: 1 << 16}, "more than 65536 bytes written"},
		{"a script that runs itself", "printf '#!/bin/bash\\n/tmp/s\\n' > /tmp/s; chmod +x /tmp/s; /tmp/s", Limits{Depth: 5}, "more than 5 deep"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Evaluate(context.Background(), script(tc.in), Options{Limits: tc.limits})
			var le *LimitError
			if !errors.As(err, &le) || !stoppedBy(err.Error(), tc.want) || !strings.Contains(err.Error(), "an endless loop?") {
				t.Errorf("error %v, want a LimitError saying %q", err, tc.want)
			}
		})
	}
}

func gzipB64(t *testing.T, s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	must(t, zw.Close())
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// TestEvaluateCloudConfig: write_files in every encoding, bootcmd before
// write_files, shell parts before runcmd (cloud-init's order), a later part's key
// replacing an earlier one's.
func TestEvaluateCloudConfig(t *testing.T) {
	cc := `#cloud-config
bootcmd:
- echo "boot $INSTANCE_ID" >> /tmp/order
write_files:
- path: /etc/a
  content: plain
- path: /etc/b
  encoding: b64
  content: ` + base64.StdEncoding.EncodeToString([]byte("from base64")) + `
- path: /etc/c
  encoding: gz+b64
  content: ` + gzipB64(t, "from gzip") + `
  permissions: "0755"
- path: /etc/a
  content: " appended"
  append: true
runcmd:
- echo runcmd >> /tmp/order
- [/etc/eks/bootstrap.sh, "$(cat /etc/a)", "$(cat /etc/b)", "$(cat /etc/c)", "$(cat /tmp/order | tr '\n' ' ')"]
packages: [jq]
`
	parts := []userdata.Part{
		{Index: 1, ContentType: userdata.TypeCloudConfig, Body: []byte(cc)},
		{Index: 2, ContentType: userdata.TypeShellScript, Body: []byte("#!/bin/bash\necho part2 >> /tmp/order\n")},
	}
	ev := evaluate(t, parts, Options{Image: map[string]File{}})
	if len(ev.Calls) != 1 {
		t.Fatalf("%d calls", len(ev.Calls))
	}
	// runcmd's list items are quoted words: "$(cat ...)" is not expanded.
	want := []string{"$(cat /etc/a)", "$(cat /etc/b)", "$(cat /etc/c)", "$(cat /tmp/order | tr '\n' ' ')"} // YAML's "\n" is a newline
	if !reflect.DeepEqual(ev.Calls[0].Args, want) {
		t.Errorf("args %q, want %q", ev.Calls[0].Args, want)
	}
	for p, want := range map[string]string{"/etc/a": "plain appended", "/etc/b": "from base64", "/etc/c": "from gzip", "/tmp/order": "boot i-0123456789abcdef0\npart2\nruncmd\n"} {
		if got := string(ev.Files[p].Data); got != want {
			t.Errorf("%s: %q, want %q", p, got, want)
		}
	}
	if ev.Files["/etc/c"].Mode != 0o755 {
		t.Errorf("/etc/c mode %o", ev.Files["/etc/c"].Mode)
	}
	if !strings.Contains(strings.Join(ev.NotSimulated, ","), "cloud-config packages") {
		t.Errorf("not simulated %q lacks cloud-config packages", ev.NotSimulated)
	}
	// A second cloud-config's runcmd replaces the first's.
	parts = append(parts, userdata.Part{Index: 3, ContentType: userdata.TypeCloudConfig, Body: []byte("#cloud-config\nruncmd:\n- /etc/eks/bootstrap.sh second\n")})
	ev = evaluate(t, parts, Options{Image: map[string]File{}})
	if len(ev.Calls) != 1 || !reflect.DeepEqual(ev.Calls[0].Args, []string{"second"}) {
		t.Errorf("calls %+v, want only the second part's runcmd", ev.Calls)
	}
}

func TestEvaluateCallsBootstrapAndScriptsSeeItsFiles(t *testing.T) {
	in := "/etc/eks/bootstrap.sh c\njq -s '.[0] * .[1]' /etc/k.json /etc/extra.json > /tmp/k.json\nmv /tmp/k.json /etc/k.json\n"
	parts := []userdata.Part{
		{Index: 1, ContentType: userdata.TypeCloudConfig, Body: []byte("#cloud-config\nwrite_files:\n- path: /etc/extra.json\n  content: '{\"b\":{\"y\":2},\"c\":3}'\n")},
		{Index: 2, ContentType: userdata.TypeShellScript, Body: []byte(in)},
	}
	var got []Call
	ev := evaluate(t, parts, Options{Bootstrap: func(_ context.Context, c Call) (map[string]File, error) {
		got = append(got, c)
		return map[string]File{"/etc/k.json": {Data: []byte(`{"a":1,"b":{"x":1}}`), Mode: 0o644}}, nil
	}})
	if len(got) != 1 || !reflect.DeepEqual(got[0].Eksboot, []string{"c"}) {
		t.Fatalf("bootstrap got %+v", got)
	}
	want := "{\n  \"a\": 1,\n  \"b\": {\n    \"x\": 1,\n    \"y\": 2\n  },\n  \"c\": 3\n}\n"
	if s := string(ev.Files["/etc/k.json"].Data); s != want {
		t.Errorf("/etc/k.json after the merge:\n%s\nwant\n%s", s, want)
	}
}

func TestEvaluateSamples(t *testing.T) {
	raw, err := os.ReadFile(samples + "/04-eksctl-nodegroup-al2-cloudconfig.userdata.gz")
	must(t, err)
	parts, err := userdata.Parse(raw)
	must(t, err)
	ev := evaluate(t, parts, Options{})
	if len(ev.Calls) != 1 {
		t.Fatalf("%d calls", len(ev.Calls))
	}
	c := ev.Calls[0]
	if !strings.Contains(c.Where, "runcmd line 3: /var/lib/cloud/scripts/eksctl/bootstrap.al2.sh line 10") {
		t.Errorf("where %q", c.Where)
	}
	i := strings.Index(strings.Join(c.Eksboot, "\n"), "node-lifecycle=spot,alpha.eksctl.io/instance-id=i-0123456789abcdef0 --register-with-taints=dedicated=workers:NoSchedule --max-pods=40")
	if i < 0 {
		t.Errorf("eksctl's KUBELET_EXTRA_ARGS are not built from IMDS: %q", c.Eksboot)
	}
}

// TestEvaluateLongWords: words of 1 MiB, the most decoding gives, in every quoting,
// are read whole (the old lexer was once quadratic on them).
func TestEvaluateLongWords(t *testing.T) {
	for _, w := range []string{strings.Repeat("a", 1<<20), `"` + strings.Repeat("a", 1<<20) + `"`, strings.Repeat(`a\ `, 1<<18), strings.Repeat("'a'", 1<<18)} {
		c, err := FindBootstrapCall(script("/etc/eks/bootstrap.sh " + w))
		if err != nil || c == nil || len(c.Args) != 1 {
			t.Fatalf("%.20q...: %v", w, err)
		}
	}
}

// TestEvaluateTimeIsTheScripts: the wall-time bound stops while the Bootstrap hook
// runs (render --discover asks EKS there), so a slow lookup is not an endless loop.
func TestEvaluateTimeIsTheScripts(t *testing.T) {
	hook := func(context.Context, Call) (map[string]File, error) {
		time.Sleep(time.Second)
		return nil, nil
	}
	ev, err := Evaluate(context.Background(), script("/etc/eks/bootstrap.sh c\necho after > /tmp/x"), Options{Bootstrap: hook, Limits: Limits{Time: 500 * time.Millisecond}})
	if err != nil || string(ev.Files["/tmp/x"].Data) != "after\n" {
		t.Fatalf("%v; files %v", err, ev)
	}
}
