package nodesys

import (
	"fmt"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/eksboot/eksboot/unitenv/unitenvtest"
)

// nodeadm's e2e case nodeadm-environment-config (awslabs/amazon-eks-ami@81fec2e8
// nodeadm/test/e2e/cases/nodeadm-environment-config/config-basic-env.yaml and
// expected-config-basic-env.conf; ../shared/peer/nodeadm-e2e/).
func TestInstanceEnvironmentMatchesNodeadmBasicEnv(t *testing.T) {
	files, err := InstanceEnvironment(map[string]map[string]string{
		"default": {
			"DUMMY_VAR":   "HELLO WORLD",
			"HTTP_PROXY":  "http://example-proxy:8080",
			"HTTPS_PROXY": "https://example-proxy:8080",
			"NO_PROXY":    "localhost,127.0.0.1,169.254.169.254",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `[Manager]
DefaultEnvironment="DUMMY_VAR=HELLO WORLD"
DefaultEnvironment="HTTPS_PROXY=https://example-proxy:8080"
DefaultEnvironment="HTTP_PROXY=http://example-proxy:8080"
DefaultEnvironment="NO_PROXY=localhost,127.0.0.1,169.254.169.254"
`
	if len(files) != 3 {
		t.Fatalf("got %d files, want 3", len(files))
	}
	if f := files[0]; f.Key != "default" || f.Path != "/etc/systemd/system.conf.d/environment.conf" || f.Unit != "" || string(f.Data) != want {
		t.Errorf("default: got %+v (data %q), want %s with %q", f, f.Data, ManagerEnvironmentPath, want)
	}
	for _, f := range files[1:] {
		if f.Data != nil {
			t.Errorf("%s: got %q, want no file", f.Key, f.Data)
		}
	}
}

func TestInstanceEnvironmentServiceDropIns(t *testing.T) {
	files, err := InstanceEnvironment(map[string]map[string]string{
		"kubelet":    {"B": "2", "A": "1"},
		"containerd": {"HTTPS_PROXY": "http://proxy:3128"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ path, unit, data string }{
		"default":    {"/etc/systemd/system.conf.d/environment.conf", "", ""},
		"kubelet":    {"/etc/systemd/system/kubelet.service.d/environment.conf", "kubelet.service", "[Service]\nEnvironment=\"A=1\"\nEnvironment=\"B=2\"\n"},
		"containerd": {"/etc/systemd/system/containerd.service.d/environment.conf", "containerd.service", "[Service]\nEnvironment=\"HTTPS_PROXY=http://proxy:3128\"\n"},
	}
	for i, key := range []string{"default", "kubelet", "containerd"} {
		f, w := files[i], want[key]
		if f.Key != key || f.Path != w.path || f.Unit != w.unit || string(f.Data) != w.data {
			t.Errorf("file %d: got %+v (data %q), want key %s path %s unit %q data %q", i, f, f.Data, key, w.path, w.unit, w.data)
		}
	}
}

// nodeadm e2e nodeadm-environment-config/config-empty-env.yaml and config-no-env.yaml:
// empty maps and no environment at all write nothing and are not errors.
func TestInstanceEnvironmentEmptyIsNoFile(t *testing.T) {
	for name, env := range map[string]map[string]map[string]string{
		"absent": nil,
		"empty":  {"default": {}, "kubelet": {}, "containerd": {}},
	} {
		files, err := InstanceEnvironment(env)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range files {
			if f.Data != nil {
				t.Errorf("%s: %s: got %q, want no file", name, f.Key, f.Data)
			}
		}
	}
}

// Every value that is accepted reaches the environment byte for byte after
// systemd's parsing (unquote, C unescape, and %% for the service drop-ins).
func TestInstanceEnvironmentRoundTrip(t *testing.T) {
	values := []string{
		"plain", "with space", `back\slash`, `"quoted"`, "it's", "tab\there",
		"$HOME ${X}", "a=b=c", "ünïcödé", "", " lead and trail ", `\n`, "semi;colon #hash",
	}
	for _, key := range []string{"default", "kubelet"} {
		for _, v := range values {
			files, err := InstanceEnvironment(map[string]map[string]string{key: {"V": v}})
			if err != nil {
				t.Fatalf("%s %q: %v", key, v, err)
			}
			f := files[0]
			if key == "kubelet" {
				f = files[1]
			}
			opts, err := unit.DeserializeOptions(strings.NewReader(string(f.Data)))
			if err != nil || len(opts) != 1 {
				t.Fatalf("%s %q: deserialize %q: %v (%d options)", key, v, f.Data, err, len(opts))
			}
			got, err := unitenvtest.Parse(opts[0].Value)
			if err != nil || len(got) != 1 || got[0] != "V="+v {
				t.Errorf("%s %q: line %q parses to %q (%v), want one word %q", key, v, opts[0].Value, got, err, "V="+v)
			}
		}
	}
	// % in a service drop-in is written as %%, which specifier expansion undoes.
	files, err := InstanceEnvironment(map[string]map[string]string{"containerd": {"P": "http://u:p%40ss@proxy"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "[Service]\nEnvironment=\"P=http://u:p%%40ss@proxy\"\n"; string(files[2].Data) != want {
		t.Errorf("got %q, want %q", files[2].Data, want)
	}
	opts, _ := unit.DeserializeOptions(strings.NewReader(string(files[2].Data)))
	if got, err := unitenvtest.Parse(opts[0].Value); err != nil || len(got) != 1 || got[0] != "P=http://u:p%40ss@proxy" {
		t.Errorf("parses to %q (%v)", got, err)
	}
}

func TestInstanceEnvironmentErrors(t *testing.T) {
	_, err := InstanceEnvironment(map[string]map[string]string{
		"default":    {"1BAD": "x", "GOOD": "ok", "NL": "a\nb", "PCT": "50%"},
		"kubelet":    {"NUL": "a\x00b", "bad-name": "x"},
		"containerd": {"OK": "fine"},
		"sshd":       {"X": "y"},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		"spec.instance.environment.sshd: unknown key, want default, kubelet or containerd",
		`spec.instance.environment.default.1BAD: environment variable name "1BAD" is invalid`,
		"spec.instance.environment.default.NL: value has control character U+000A",
		"spec.instance.environment.default.PCT: value has '%'",
		"spec.instance.environment.kubelet.NUL: value has control character U+0000",
		`spec.instance.environment.kubelet.bad-name: environment variable name "bad-name" is invalid`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nlacks %q", err, want)
		}
	}
	for _, notWant := range []string{"GOOD", "containerd.OK"} {
		if strings.Contains(err.Error(), notWant) {
			t.Errorf("error %q names valid %s", err, notWant)
		}
	}
}

// TestInstanceEnvironmentBoundsWhatExecveTakes: a variable longer than Linux's
// MAX_ARG_STRLEN, or more than a unit's share of execve's total, would make the
// unit fail at every start; it is refused, naming the field.
func TestInstanceEnvironmentBoundsWhatExecveTakes(t *testing.T) {
	big := strings.Repeat("x", MaxEnvironmentVariable-len("BIG="))
	if _, err := InstanceEnvironment(map[string]map[string]string{"kubelet": {"BIG": big}}); err != nil {
		t.Fatalf("the longest variable: %v", err)
	}
	_, err := InstanceEnvironment(map[string]map[string]string{"kubelet": {"BIG": big + "x"}})
	if want := "spec.instance.environment.kubelet.BIG: 131072 bytes, more than the 131071 a variable may have"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	many := map[string]string{}
	for i := range 5 {
		many[fmt.Sprintf("V%d", i)] = strings.Repeat("y", 120<<10)
	}
	_, err = InstanceEnvironment(map[string]map[string]string{"default": many, "containerd": many})
	if want := "spec.instance.environment: containerd.service would get 1228840 bytes of variables (default and containerd), more than the 1048576 allowed"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("%v, want %q", err, want)
	}
	if err != nil && strings.Contains(err.Error(), "kubelet.service would get") {
		t.Errorf("kubelet.service is within its share: %v", err)
	}
}

// TestInstanceEnvironmentQuotesNames: a key or name with a line break is named
// escaped, so each problem stays one line (errors.Join puts one between them).
func TestInstanceEnvironmentQuotesNames(t *testing.T) {
	_, err := InstanceEnvironment(map[string]map[string]string{"kubelet\nx": {"A": "b"}, "kubelet": {"B\nok C": "d"}})
	if err == nil {
		t.Fatal("no error")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `spec.instance.environment."kubelet\nx": unknown key`) ||
		!strings.HasPrefix(lines[1], `spec.instance.environment.kubelet."B\nok C": environment variable name`) {
		t.Errorf("%q: want two problems, each naming its key escaped", err)
	}
}
