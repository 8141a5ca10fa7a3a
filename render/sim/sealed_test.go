package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// hostDir is an empty host directory that is also the process's TMPDIR, where the
// interpreter would put its sh-interp- files; it must stay empty.
func hostDir(t *testing.T) string {
	t.Helper()
	d := t.TempDir()
	t.Setenv("TMPDIR", d)
	return d
}

func assertEmpty(t *testing.T, d string) {
	t.Helper()
	es, err := os.ReadDir(d)
	must(t, err)
	for _, e := range es {
		t.Errorf("the evaluation left %s on the host", filepath.Join(d, e.Name()))
	}
}

func firstArgs(t *testing.T, src string, image map[string]File) []string {
	t.Helper()
	ev, err := Evaluate(context.Background(), script(src), Options{Image: image})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Calls) == 0 {
		t.Fatal("no bootstrap.sh call")
	}
	return ev.Calls[0].Args
}

// TestEvaluateIsSealed: no path of the host is written or read, whatever the script
// does with TMPDIR, here-documents, process substitution, pwd -P or ~user.
func TestEvaluateIsSealed(t *testing.T) {
	t.Run("sh-interp- files in the host's TMPDIR", func(t *testing.T) {
		d := hostDir(t)
		got := firstArgs(t, `mkdir -p `+d+`
echo pwned > `+d+`/sh-interp-x
/etc/eks/bootstrap.sh "$(cat `+d+`/sh-interp-x)"`, nil)
		assertEmpty(t, d)
		if !reflect.DeepEqual(got, []string{"pwned"}) {
			t.Errorf("got %q, want the simulated file's pwned", got)
		}
	})
	t.Run("TMPDIR exported to bash -c", func(t *testing.T) {
		d := hostDir(t)
		_ = firstArgs(t, `export TMPDIR=`+d+`
bash -c 'echo "* * * * * root id" > `+d+`/sh-interp-job'
TMPDIR=`+d+` bash -c 'echo x > $TMPDIR/sh-interp-y'
/etc/eks/bootstrap.sh c`, nil)
		assertEmpty(t, d)
	})
	t.Run("process substitution through eval and source", func(t *testing.T) {
		d := hostDir(t)
		got := firstArgs(t, `X=$(eval 'cat <(echo hi)')
eval 'y=<(:)'
echo 'Z=$(cat <(echo sourced))' > s.sh
. ./s.sh
eval 'echo ignored > >(cat)'
/etc/eks/bootstrap.sh "$X" "$Z"`, nil)
		assertEmpty(t, d)
		if !reflect.DeepEqual(got, []string{"hi", "sourced"}) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("host files read by read, mapfile and a redirected substitution", func(t *testing.T) {
		d := hostDir(t)
		secret := filepath.Join(d, "sh-interp-secret")
		must(t, os.WriteFile(secret, []byte("host-secret\n"), 0o600))
		got := firstArgs(t, `read X < `+secret+`
mapfile -t M < `+secret+`
Y=$(<`+secret+`)
/etc/eks/bootstrap.sh "$X" "${M[*]}" "$Y"`, nil)
		if strings.Contains(strings.Join(got, " "), "host-secret") {
			t.Errorf("the script read the host's file: %q", got)
		}
	})
	t.Run("pwd -P and cd -P", func(t *testing.T) {
		got := firstArgs(t, `mkdir -p /opt/only-simulated/d
cd /opt/only-simulated/d
A=$(pwd -P)
cd -P ..
/etc/eks/bootstrap.sh "$A" "$(pwd)"`, nil)
		if !reflect.DeepEqual(got, []string{"/opt/only-simulated/d", "/opt/only-simulated"}) {
			t.Errorf("got %q", got)
		}
	})
	t.Run("tilde expansion from the node's user database", func(t *testing.T) {
		u := hostOnlyUser(t)
		got := firstArgs(t, `/etc/eks/bootstrap.sh ~ ~root ~ec2-user/x ~`+u+` ~nobody-here/y ~alice`, nil)
		want := []string{"/root", "/root", "/home/ec2-user/x", "~" + u, "~nobody-here/y", "~alice"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
		img := map[string]File{"/etc/passwd": {Data: []byte("root:x:0:0:root:/root:/bin/bash\nalice:x:1000:1000::/srv/alice:/bin/bash\n"), Mode: 0o644}}
		got = firstArgs(t, `/etc/eks/bootstrap.sh ~alice ~ec2-user`, img)
		if want := []string{"/srv/alice", "~ec2-user"}; !reflect.DeepEqual(got, want) {
			t.Errorf("with the image's /etc/passwd: got %q, want %q", got, want)
		}
	})
	t.Run("test -O -G -ef", func(t *testing.T) {
		got := firstArgs(t, `touch /etc/f
[ -O /etc/f ] && A=own
[[ -G /etc/f ]] && B=grp
[ -O /etc/missing ] || C=none
[ /etc/f -ef /etc/../etc/f ] && D=same
[[ /etc/f -ef /etc/missing ]] || E=differ
/etc/eks/bootstrap.sh "$A" "$B" "$C" "$D" "$E"`, nil)
		if want := []string{"own", "grp", "none", "same", "differ"}; !reflect.DeepEqual(got, want) {
			t.Errorf("got %q, want %q", got, want)
		}
	})
	for _, tc := range []struct{ src, name string }{
		{"touch a b\n[ a -nt b ] && X=1\n/etc/eks/bootstrap.sh c", "-nt"},
		{"touch a\n[[ -N a ]] && X=1\n/etc/eks/bootstrap.sh c", "-N"},
		{"touch a b\neval '[[ a -ot b ]]'\n/etc/eks/bootstrap.sh c", "-ot"},
		{"K=$(echo '{\"b\":1,\"a\":2}' | jq -r 'to_entries[] | .key')\n/etc/eks/bootstrap.sh \"$K\"", "jq"},
		{"K=$(echo '{\"x\":\"b\",\"y\":\"a\"}' | jq -c '{(.x): 1, (.y): 2}')\n/etc/eks/bootstrap.sh \"$K\"", "jq"},
		{"K=$(echo '{}' | jq -c '{b: 1} | .a = .b | .b = 2')\n/etc/eks/bootstrap.sh \"$K\"", "jq"},
		{"K=$(echo a | xargs -P 4 echo)\n/etc/eks/bootstrap.sh \"$K\"", "xargs -P"},
	} {
		t.Run("refused "+tc.name, func(t *testing.T) {
			_, err := Evaluate(context.Background(), script(tc.src), Options{})
			var ns *NotSimulatedError
			if !errors.As(err, &ns) || !strings.Contains(err.Error(), tc.name) || !strings.Contains(err.Error(), "line ") {
				t.Errorf("got %v, want a refusal naming %s and its line", err, tc.name)
			}
		})
	}
}

// hostOnlyUser is a user of the host's /etc/passwd that the simulated node does not
// have (one is added to the test's view when there is none: a name is enough).
func hostOnlyUser(t *testing.T) string {
	b, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip("no /etc/passwd on this host")
	}
	for _, l := range strings.Split(string(b), "\n") {
		name, _, _ := strings.Cut(l, ":")
		if name != "" && !strings.HasPrefix(name, "#") {
			if _, ok := nodeUsers()[name]; !ok {
				return name
			}
		}
	}
	t.Skip("every host user is also a node user")
	return ""
}
