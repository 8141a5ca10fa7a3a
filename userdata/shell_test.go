package userdata

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func script(s string) []Part {
	return []Part{{Index: 1, ContentType: TypeShellScript, Body: []byte(s)}}
}

func TestFindBootstrapCall(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"plain", "#!/bin/bash\n/etc/eks/bootstrap.sh c --use-max-pods false\n", []string{"c", "--use-max-pods", "false"}},
		{"quotes", `/etc/eks/bootstrap.sh 'c' --kubelet-extra-args '--a="x y" --b' --dns-cluster-ip "1.2.3.4"`, []string{"c", "--kubelet-extra-args", `--a="x y" --b`, "--dns-cluster-ip", "1.2.3.4"}},
		{"continuations and CRLF", "set -ex\r\n/etc/eks/bootstrap.sh c \\\r\n  --x \\\n  'y'\r\n", []string{"c", "--x", "y"}},
		{"variables set literally", "N=c\nX='a b'\n/etc/eks/bootstrap.sh \"$N\" --k \"${X}\" --l $X\n", []string{"c", "--k", "a b", "--l", "a", "b"}},
		{"relative name, after other commands", "echo hi; cd /etc/eks && ./bootstrap.sh c", []string{"c"}},
		{"in an if", "if true; then /etc/eks/bootstrap.sh c; fi", []string{"c"}},
		{"comment and heredoc", "# /etc/eks/bootstrap.sh wrong\ncat <<EOF\ndon't /etc/eks/bootstrap.sh no\nEOF\n/etc/eks/bootstrap.sh c\n", []string{"c"}},
		{"backslash escapes", `/etc/eks/bootstrap.sh c --k a\ b "q\"q"`, []string{"c", "--k", "a b", `q"q`}},
		{"sed hook", "sed -i 's/KUBELET_EXTRA_ARGS=$2/KUBELET_EXTRA_ARGS=\"$2 --max-pods=58\"/' /etc/eks/bootstrap.sh\n/etc/eks/bootstrap.sh c --kubelet-extra-args '--a'\n",
			[]string{"c", "--kubelet-extra-args", "--a --max-pods=58"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FindBootstrapCall(script(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if c == nil {
				t.Fatal("no call found")
			}
			if !reflect.DeepEqual(c.Args, tc.want) {
				t.Errorf("args %q, want %q", c.Args, tc.want)
			}
		})
	}
}

func TestFindBootstrapCallUnresolved(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"unset variable", "/etc/eks/bootstrap.sh \"$CLUSTER\"", "part 1 (text/x-shellscript) line 1: bootstrap.sh argument 1 depends on the variable $CLUSTER, which the script does not set to a literal value before, known only when the script runs (eksboot parses scripts, it does not run them)"},
		{"command substitution", "X=$(curl -s http://x)\n/etc/eks/bootstrap.sh c \\\n --k \"$X\"", "part 1 (text/x-shellscript) line 2: bootstrap.sh argument 3 depends on the variable $X, which the script does not set to a literal value before, known only when the script runs (eksboot parses scripts, it does not run them)"},
		{"inline substitution", "/etc/eks/bootstrap.sh c --k `date`", "part 1 (text/x-shellscript) line 1: bootstrap.sh argument 3 depends on a `command` substitution, known only when the script runs (eksboot parses scripts, it does not run them)"},
		{"parameter expansion", "/etc/eks/bootstrap.sh c ${X:+--x}", "part 1 (text/x-shellscript) line 1: bootstrap.sh argument 2 depends on the parameter expansion ${X:+--x}, known only when the script runs (eksboot parses scripts, it does not run them)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FindBootstrapCall(script(tc.in))
			var ue *UnresolvedError
			if !errors.As(err, &ue) || err.Error() != tc.want {
				t.Errorf("error %v\nwant  %s", err, tc.want)
			}
		})
	}
}

func TestFindBootstrapCallNone(t *testing.T) {
	for _, in := range []string{"", "echo /etc/eks/bootstrap.sh", "sed -i s/a/b/ /etc/eks/bootstrap.sh"} {
		if c, err := FindBootstrapCall(script(in)); c != nil || err != nil {
			t.Errorf("%q: %v, %v; want nothing", in, c, err)
		}
	}
	if _, err := FindBootstrapCall(script("echo 'unterminated")); err == nil {
		t.Error("an unterminated quote is not an error")
	}
}

// TestFindBootstrapCallLongWords: words of 1 MiB, in every quoting, are split in
// linear time (a quadratic lexer made a 1 MiB user-data part take minutes).
func TestFindBootstrapCallLongWords(t *testing.T) {
	for _, w := range []string{strings.Repeat("a", 1<<20), `"` + strings.Repeat("a", 1<<20) + `"`, strings.Repeat(`a\ `, 1<<18), strings.Repeat("'a'", 1<<18)} {
		c, err := FindBootstrapCall(script("/etc/eks/bootstrap.sh " + w))
		if err != nil || c == nil || len(c.Args) != 1 {
			t.Fatalf("%.20q...: %v", w, err)
		}
	}
}
