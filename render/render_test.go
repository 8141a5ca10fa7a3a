package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/internal/goldencase"
	"github.com/eksboot/eksboot/kubeletconf"
)

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func goldenCA(t *testing.T) string {
	t.Helper()
	ca, err := os.ReadFile("../testdata/golden/01-m5large-usw2-vpc192/etc/kubernetes/pki/ca.crt")
	must(t, err)
	return base64.StdEncoding.EncodeToString(ca)
}

func renderScript(t *testing.T, s string) (*Result, error) {
	t.Helper()
	return Render(context.Background(), []byte(s), Options{
		InstanceType: "m5.large", Region: "us-west-2",
		KubeletVersion: kubeletconf.Version{Major: 1, Minor: 32, Patch: 9}, Profile: "al2", Log: zap.NewNop(),
	})
}

// TestRenderIssueExamples: the scripts the hand-written lexer got wrong render as bash
// runs them.
func TestRenderIssueExamples(t *testing.T) {
	ca := goldenCA(t)
	for _, tc := range []struct {
		name, script string
		cluster      string
		want         []string // in the kubelet flags
	}{
		{"a quoted ) in $(...)", `NAME=$(echo "a)b" | cut -d')' -f1)` + "\n/etc/eks/bootstrap.sh \"$NAME\"", "a", nil},
		{"$'...' quoting", `/etc/eks/bootstrap.sh c --kubelet-extra-args $'--node-labels=a=b --max-pods=20'`, "c", []string{"--node-labels=a=b", "--max-pods=20"}},
		{"defaults", `A=from-a` + "\n" + `/etc/eks/bootstrap.sh ${X:-${A}} --kubelet-extra-args "${Y:---max-pods=7}"`, "from-a", []string{"--max-pods=7"}},
		{"a prefix assignment", `KUBELET_EXTRA_ARGS=--max-pods=20 /etc/eks/bootstrap.sh c`, "c", []string{"--max-pods=20"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := "#!/bin/bash\n" + strings.Replace(tc.script, "/etc/eks/bootstrap.sh", "/etc/eks/bootstrap.sh --b64-cluster-ca "+ca+" --apiserver-endpoint https://x.example.com", 1) + "\n"
			r, err := renderScript(t, s)
			if err != nil {
				t.Fatal(err)
			}
			if kc := string(r.Tree["/var/lib/kubelet/kubeconfig"]); !strings.Contains(kc, "- \""+tc.cluster+"\"\n") {
				t.Errorf("kubeconfig does not name cluster %q:\n%s", tc.cluster, kc)
			}
			for _, w := range tc.want {
				if !strings.Contains(" "+r.Flags+" ", " "+w+" ") {
					t.Errorf("flags %q lack %q", r.Flags, w)
				}
			}
		})
	}
}

// TestRenderABootstrapHelpCall: a script whose bootstrap.sh call asks for its help
// configures nothing, and says so (it was a nil Config, and a panic).
func TestRenderABootstrapHelpCall(t *testing.T) {
	_, err := renderScript(t, "#!/bin/bash\n/etc/eks/bootstrap.sh my-cluster -h\n")
	if err == nil || !strings.Contains(err.Error(), "bootstrap.sh: -h/--help: the call prints bootstrap.sh's help and configures nothing") {
		t.Errorf("error %v", err)
	}
}

// TestRenderSeesTheImage: render's simulated images hold the files the real images
// ship, so a script's edit of the AL2 image's kubelet-config.json before bootstrap.sh
// shows (bootstrap.sh edited the file in place); --image-file adds the user's own
// image's files: an AL2023 image's config.json.d drop-in applies over
// kubelet-config.json, and a nodeadm.d drop-in, the image's or one a script writes,
// is merged after the user data's NodeConfig.
func TestRenderSeesTheImage(t *testing.T) {
	ca := goldenCA(t)
	t.Run("a jq edit before bootstrap.sh", func(t *testing.T) {
		r, err := renderScript(t, "#!/bin/bash\nF=/etc/kubernetes/kubelet/kubelet-config.json\n"+
			`echo "$(jq '.kubeAPIQPS=50 | .registryPullQPS=20' $F)" > $F`+"\n"+
			"/etc/eks/bootstrap.sh c --b64-cluster-ca "+ca+" --apiserver-endpoint https://x.example.com\n")
		must(t, err)
		kc := string(r.Tree[kubeletconf.ConfigPath])
		for _, want := range []string{`"kubeAPIQPS": 50`, `"registryPullQPS": 20`, `"maxPods": 29`} {
			if !strings.Contains(kc, want) {
				t.Errorf("kubelet-config.json lacks %s:\n%s", want, kc)
			}
		}
		if len(r.KubeletConfigFrom) != 1 || !strings.Contains(r.KubeletConfigFrom[0], kubeletconf.ConfigPath) {
			t.Errorf("kubelet configuration from %q", r.KubeletConfigFrom)
		}
	})

	nc := "apiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  cluster:\n    name: c\n    apiServerEndpoint: https://x.example.com\n" +
		"    certificateAuthority: " + ca + "\n    cidr: 10.100.0.0/16\n  kubelet:\n    config: {maxPods: 110}\n"
	mime := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=\"//\"\n\n--//\nContent-Type: application/node.eks.aws\n\n" + nc +
		"--//\nContent-Type: text/x-shellscript\n\n#!/bin/bash\nmkdir -p /etc/eks/nodeadm.d\nprintf 'apiVersion: node.eks.aws/v1alpha1\\nkind: NodeConfig\\nspec: {kubelet: {flags: [--node-labels=from=script]}}\\n' > /etc/eks/nodeadm.d/50-script.yaml\n--//--\n"
	r, err := Render(context.Background(), []byte(mime), Options{
		InstanceType: "m5.large", Region: "us-west-2", KubeletVersion: kubeletconf.Version{Major: 1, Minor: 35, Patch: 2}, Profile: "al2023", Log: zap.NewNop(),
		ImageFiles: map[string][]byte{
			kubeletconf.ConfigDropInDir + "/90-image.conf": []byte("apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 58\n"),
			"/etc/eks/nodeadm.d/10-image.json":             []byte(`{"apiVersion":"node.eks.aws/v1alpha1","kind":"NodeConfig","spec":{"kubelet":{"config":{"registryPullQPS":9}}}}`),
		},
	})
	must(t, err)
	if !strings.Contains(string(r.KubeletEffective), `"maxPods": 58`) || !strings.Contains(string(r.KubeletEffective), `"registryPullQPS": 9`) {
		t.Errorf("the kubelet's configuration: want the image's drop-in's maxPods 58 over the NodeConfig's 110, and nodeadm.d's registryPullQPS:\n%s", r.KubeletEffective)
	}
	if !strings.Contains(r.Flags, "--node-labels=from=script") || !strings.Contains(r.Flags, "--config-dir="+kubeletconf.ConfigDropInDir) {
		t.Errorf("flags %q: want the script's nodeadm.d drop-in's label and --config-dir", r.Flags)
	}
	if !strings.Contains(r.From, "/etc/eks/nodeadm.d/10-image.json") || !strings.Contains(r.From, "/etc/eks/nodeadm.d/50-script.yaml") {
		t.Errorf("from %q", r.From)
	}
}

// TestRenderGoldenUserData: render of a golden case's user data (its scripts edit
// the AL2 image's files before bootstrap.sh, testdata/golden/README.md) prints what
// the real bootstrap.sh wrote after them: kubelet-config.json as JSON (the keys the
// user data set included; a zero value the kubelet treats as unset may be left
// out), the drop-ins, the kubeconfig and containerd's config byte for byte.
func TestRenderGoldenUserData(t *testing.T) {
	cases, err := goldencase.LoadAll("../testdata/golden")
	must(t, err)
	n := 0
	for _, c := range cases {
		if c.UserData == "" {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			ud, err := os.ReadFile(filepath.Join(c.Dir, c.UserData))
			must(t, err)
			v, err := kubeletconf.FindVersion(c.KubeletVersion)
			must(t, err)
			r, err := Render(context.Background(), ud, Options{
				InstanceType: c.IMDS.InstanceType, Region: c.IMDS.Region, KubeletVersion: v, Profile: "al2", Log: zap.NewNop(),
			})
			must(t, err)
			for _, rel := range []string{"/var/lib/kubelet/kubeconfig", "/etc/systemd/system/kubelet.service.d/10-kubelet-args.conf", "/etc/containerd/config.toml"} {
				want, err := os.ReadFile(filepath.Join(c.Dir, rel))
				must(t, err)
				if !bytes.Equal(r.Tree[rel], want) {
					t.Errorf("%s:\nrender:\n%s\nbootstrap.sh:\n%s", rel, r.Tree[rel], want)
				}
			}
			want, err := os.ReadFile(filepath.Join(c.Dir, kubeletconf.ConfigPath))
			must(t, err)
			var got, exp map[string]any
			must(t, json.Unmarshal(r.Tree[kubeletconf.ConfigPath], &got))
			must(t, json.Unmarshal(want, &exp))
			for k, w := range exp {
				if g, ok := got[k]; !reflect.DeepEqual(g, w) && (ok || !isZero(w)) {
					t.Errorf("kubelet-config.json %s: render %v, bootstrap.sh %v", k, g, w)
				}
			}
			for k, g := range got {
				if _, ok := exp[k]; !ok {
					t.Errorf("kubelet-config.json %s: render %v, bootstrap.sh has none", k, g)
				}
			}
		})
	}
	if n == 0 {
		t.Fatal("no golden case with user data")
	}
}

func isZero(v any) bool { return v == nil || v == 0.0 || v == "" }

// TestRenderSaysWhenTheKubeletStarts: NodeConfig parts alone start it before
// cloud-final; a script beside them keeps it after, naming the part; a bootstrap.sh
// call starts it in the stage that runs its part.
func TestRenderSaysWhenTheKubeletStarts(t *testing.T) {
	ca := goldenCA(t)
	nc, err := os.ReadFile("../testdata/userdata/10-nodeadm-plain-nodeconfig.userdata")
	must(t, err)
	call := "/etc/eks/bootstrap.sh c --b64-cluster-ca " + ca + " --apiserver-endpoint https://x.example.com\n"
	mime := func(parts ...string) string {
		s := "MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=B\n\n"
		for _, p := range parts {
			s += "--B\n" + p + "\n"
		}
		return s + "--B--\n"
	}
	for _, tc := range []struct{ name, userData, want string }{
		{"NodeConfig only", string(nc), "before cloud-final: the user data has only NodeConfig parts (1), which cloud-init does not run (eksboot init; an image's EKSBOOT_KUBELET_START=after-cloud-final keeps it after cloud-final)"},
		{
			"NodeConfig and a script", mime("Content-Type: application/node.eks.aws\n\n"+string(nc), "Content-Type: text/x-shellscript\n\n#!/bin/sh\necho hi\n"),
			"after cloud-final: part 2 (text/x-shellscript) is a script that cloud-final runs (eksboot init; an image's EKSBOOT_KUBELET_START=after-cloud-final keeps it after cloud-final)",
		},
		{"bootstrap.sh in a script", "#!/bin/bash\n" + call, "in cloud-final: the bootstrap.sh call of part 1 (text/x-shellscript) line 2 starts it"},
		{"bootstrap.sh in bootcmd", "#cloud-config\nbootcmd:\n- " + strings.TrimSpace(call) + "\n", "in cloud-init's init stage (cloud-init.service): the bootstrap.sh call of part 1 (text/cloud-config) bootcmd line 2 starts it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := renderScript(t, tc.userData)
			if err != nil {
				t.Fatal(err)
			}
			if r.KubeletStart != tc.want {
				t.Errorf("KubeletStart\n got %q\nwant %q", r.KubeletStart, tc.want)
			}
		})
	}
}
