package kubeletconf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestKubeconfigGolden(t *testing.T) {
	for _, c := range goldenCases {
		t.Run(c.name, func(t *testing.T) {
			got := Kubeconfig{Server: c.server, ClusterName: "demo", Region: c.region, CAFile: DefaultCAFile}.Render()
			want := readTestdata(t, filepath.Join(bootstrapDir, c.name, kubeconfigPath))
			if !bytes.Equal(got, want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestKubeconfigDefaultCAFile(t *testing.T) {
	k := Kubeconfig{Server: serverUSW2, ClusterName: "demo", Region: "us-west-2"}
	got := parseKubeconfig(t, k.Render())
	if got.CAFile != DefaultCAFile {
		t.Errorf("certificate-authority = %q, want %q", got.CAFile, DefaultCAFile)
	}
}

// TestKubeconfigQuoting renders values that bootstrap.sh's sed or a plain YAML
// scalar would mangle and checks that each reads back unchanged.
func TestKubeconfigQuoting(t *testing.T) {
	tests := []struct {
		name      string
		k         Kubeconfig
		wantPlain bool // whether the server is written unquoted
	}{
		{"ordinary", Kubeconfig{serverUSW2, "demo", "us-west-2", DefaultCAFile, ""}, true},
		{"port and path", Kubeconfig{"https://api.example.com:6443/k8s/clusters/c-1?x=1&y=2", "c", "r", DefaultCAFile, ""}, false},
		{"port and query", Kubeconfig{"https://api.example.com:6443/a?x=1%20", "c", "r", DefaultCAFile, ""}, true},
		{"fragment", Kubeconfig{"https://h/#frag", "c", "r", DefaultCAFile, ""}, false},
		{"comment lookalike", Kubeconfig{"https://h #not-a-comment", "c", "r", DefaultCAFile, ""}, false},
		{"colon space", Kubeconfig{"https://h: x", "c", "r", DefaultCAFile, ""}, false},
		{"ampersand and comma", Kubeconfig{"https://h/a&b,c", "a&b,c", "r&,", DefaultCAFile, ""}, false},
		{"quotes", Kubeconfig{`https://h/"q"/'s'`, `my"cluster'`, `"`, DefaultCAFile, ""}, false},
		{"backslashes", Kubeconfig{`https://h/\n`, `c\`, `\\`, `C:\ca.crt`, ""}, false},
		{"ipv6 host", Kubeconfig{"https://[fd00::1]:443", "c", "r", DefaultCAFile, ""}, false},
		{"trailing colon", Kubeconfig{"https://h:", "c", "r", DefaultCAFile, ""}, false},
		{"not a URL", Kubeconfig{"true", "null", "~", "yes", ""}, false},
		{"number", Kubeconfig{"1:20", "0x1F", "1e3", "010", ""}, false},
		{"empty", Kubeconfig{"", "", "", "/", ""}, false},
		{"spaces", Kubeconfig{" https://h ", " c ", "r ", "/etc/ca file.crt", ""}, false},
		{"indicators", Kubeconfig{"- x", "*a", "&b", "!tag", ""}, false},
		{"braces", Kubeconfig{"{a: b}", "[c]", "{}", "/p{x}", ""}, false},
		{"control characters", Kubeconfig{"https://h/\n- evil: 1", "a\tb\r\x00\x1b\x7f\u0085", "\u2028\u2029\ufeff\uffff", DefaultCAFile, ""}, false},
		{"unicode", Kubeconfig{"https://bücher.example/ü", "集群", "région-é", "/etc/ü.crt", ""}, false},
		{"emoji", Kubeconfig{"https://h/😀", "😀", "r", DefaultCAFile, ""}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.k.Render()
			checkGolden(t, filepath.Join("testdata", "kubeconfig", strings.ReplaceAll(tc.name, " ", "-")+".yaml"), out)
			got := parseKubeconfig(t, out)
			if got != tc.k {
				t.Errorf("read back %+v, want %+v\n%s", got, tc.k, out)
			}
			if plain := !strings.HasPrefix(serverLine.FindStringSubmatch(string(out))[1], `"`); plain != tc.wantPlain {
				t.Errorf("server written plain = %v, want %v\n%s", plain, tc.wantPlain, out)
			}
		})
	}
}

func TestKubeconfigInvalidUTF8(t *testing.T) {
	k := Kubeconfig{Server: "https://h/\xff", ClusterName: "a\xffb", Region: "r", CAFile: DefaultCAFile}
	got := parseKubeconfig(t, k.Render())
	want := Kubeconfig{Server: "https://h/\uFFFD", ClusterName: "a\uFFFDb", Region: "r", CAFile: DefaultCAFile}
	if got != want {
		t.Errorf("read back %+v, want %+v", got, want)
	}
}

var (
	caLine     = regexp.MustCompile(`(?m)^    certificate-authority: (.*)$`)
	serverLine = regexp.MustCompile(`(?m)^    server: (.*)$`)
	argsLines  = regexp.MustCompile(`(?m)^        - "-i"\n        - (.*)\n        - --region\n        - (.*)\n\z`)
	// plainScalar is what the test accepts unquoted: a path or URL of characters
	// that YAML never treats specially inside a plain scalar.
	plainScalar = regexp.MustCompile(`^(/|[A-Za-z][A-Za-z0-9+.-]*://)[A-Za-z0-9._~/:?=@+%-]*$`)
)

// parseKubeconfig reads the four values back from a rendered kubeconfig. It
// checks that the document has the template's 25 lines (no value added a line)
// and decodes each scalar: a double-quoted scalar must be a JSON string (the
// subset of YAML double-quoted scalars that Render uses), a plain one must match
// plainScalar and not end in ':'.
func parseKubeconfig(t *testing.T, out []byte) Kubeconfig {
	t.Helper()
	s := string(out)
	if n := strings.Count(s, "\n"); n != 25 || !strings.HasSuffix(s, "\n") {
		t.Fatalf("kubeconfig has %d lines, want 25:\n%s", n, s)
	}
	if want := (Kubeconfig{Server: "S", ClusterName: "N", Region: "R", CAFile: "/C"}).Render(); !sameSkeleton(s, string(want)) {
		t.Fatalf("kubeconfig structure differs from the template:\n%s", s)
	}
	args := argsLines.FindStringSubmatch(s)
	ca, server := caLine.FindStringSubmatch(s), serverLine.FindStringSubmatch(s)
	if args == nil || ca == nil || server == nil {
		t.Fatalf("kubeconfig lacks a value line:\n%s", s)
	}
	var k Kubeconfig
	var err error
	for _, v := range []struct {
		dst    *string
		scalar string
	}{{&k.CAFile, ca[1]}, {&k.Server, server[1]}, {&k.ClusterName, args[1]}, {&k.Region, args[2]}} {
		if *v.dst, err = decodeScalar(v.scalar); err != nil {
			t.Fatal(err)
		}
	}
	return k
}

// decodeScalar decodes one YAML scalar as written by Render.
func decodeScalar(scalar string) (string, error) {
	if strings.HasPrefix(scalar, `"`) {
		var v string
		if err := json.Unmarshal([]byte(scalar), &v); err != nil {
			return "", fmt.Errorf("double-quoted scalar %s: %w", scalar, err)
		}
		return v, nil
	}
	if !plainScalar.MatchString(scalar) || strings.HasSuffix(scalar, ":") {
		return "", fmt.Errorf("plain scalar %q is not plainly safe", scalar)
	}
	return scalar, nil
}

// sameSkeleton reports whether a and b have the same lines apart from the
// values of the four substituted lines.
func sameSkeleton(a, b string) bool {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	if len(la) != len(lb) {
		return false
	}
	valueLine := map[int]bool{4: true, 5: true, 22: true, 24: true}
	for i := range la {
		if valueLine[i] {
			pa, _, _ := strings.Cut(la[i], ": ")
			pb, _, _ := strings.Cut(lb[i], ": ")
			if strings.HasPrefix(la[i], "        - ") && strings.HasPrefix(lb[i], "        - ") {
				continue
			}
			if pa != pb {
				return false
			}
			continue
		}
		if la[i] != lb[i] {
			return false
		}
	}
	return true
}
