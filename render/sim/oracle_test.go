package sim

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// oracleScripts are valid bash scripts that call bootstrap.sh: their words must be
// what bash itself passes. They touch only files relative to their directory.
var oracleScripts = []struct{ name, src string }{
	{"issue: a quoted ) in a command substitution", `NAME=$(echo "a)b")
/etc/eks/bootstrap.sh "$NAME" --x "$(echo "c)d")"`},
	{"issue: ANSI-C quoting", `/etc/eks/bootstrap.sh c --kubelet-extra-args $'--node-labels=a=b\t--max-pods=20'`},
	{"issue: a default value", `/etc/eks/bootstrap.sh ${X:-default} "${Y:-two words}"`},
	{"issue: a nested default", `A=inner
/etc/eks/bootstrap.sh ${X:-${A}} "${X:-${B:-deeper}}"`},
	{"issue: a prefix assignment", `KUBELET_EXTRA_ARGS=--max-pods=20 /etc/eks/bootstrap.sh c`},
	{"a simple command's words expand before its > truncates the file", `printf '%s' '{"a":1}' > f
echo "$(cat f)-edited" > f
printf x > g
cat g > g
printf y > h
{ echo "$(cat h)"; } > h
printf z > i
X=$(cat i) > i
/etc/eks/bootstrap.sh c --f "$(cat f)" --g "$(cat g)" --h "$(cat h)" --i "$(cat i)" --x "$X"`},
	{"jq keeps the keys a program adds in the order it adds them", `printf '{"z":1,"a":2,"f":{"y":true}}' > c.json
echo "$(jq '.kubeAPIQPS=50 | .kubeAPIBurst=100 | .a=3 | .f.x=false | . + {"m": 1, "b": [2]}' c.json)" > c.json
echo "$(jq '.systemReserved = {"cpu": "100m", "memory": "200Mi"} | .evictionHard = {"memory.available": "5%"}' c.json)" > c.json
/etc/eks/bootstrap.sh c --k "$(cat c.json)" --o "$(echo '{}' | jq -c '{b: 1, a: 2}')"`},
	{"exported variable", `export KUBELET_EXTRA_ARGS='--v=4 --max-pods=9'
/etc/eks/bootstrap.sh c`},
	{"heredoc written then sourced", `cat > env.sh <<EOF
CLUSTER=from-heredoc
LABELS="a=1,b=2"
EOF
. ./env.sh
/etc/eks/bootstrap.sh "$CLUSTER" --kubelet-extra-args "--node-labels=$LABELS"`},
	{"quoted heredoc is literal", `X=$(cat <<'EOF'
$NOT ${EXPANDED} $(here)
EOF
)
/etc/eks/bootstrap.sh c --k "$X"`},
	{"heredoc with tabs stripped", "cat > f <<-EOF\n\tline one\n\t\tline two\n\tEOF\n/etc/eks/bootstrap.sh c --k \"$(cat f)\""},
	{"arrays", `ARGS=(--apiserver-endpoint "https://x.example.com" --kubelet-extra-args "--a=1 --b=2")
ARGS+=(--use-max-pods false)
/etc/eks/bootstrap.sh c "${ARGS[@]}"`},
	{"array joined", `L=(a=1 b=2 c=3)
IFS=,
/etc/eks/bootstrap.sh c --k "--node-labels=${L[*]}" ${#L[@]}`},
	{"case", `T=spot
case "$T" in
  on-demand) L=od ;;
  spot|sp*) L=spot-node ;;
  *) L=other ;;
esac
/etc/eks/bootstrap.sh c --k "--node-labels=lifecycle=$L"`},
	{"functions", `label() { local k=$1 v=$2; printf '%s=%s' "$k" "$v"; }
join() { local IFS=,; echo "$*"; }
/etc/eks/bootstrap.sh c --k "--node-labels=$(join "$(label a 1)" "$(label b 2)")"`},
	{"a function calls bootstrap.sh", `boot() { /etc/eks/bootstrap.sh "$@" --x "$#"; }
boot c "two words" ''`},
	{"set -u with defaults", `set -u
X="${UNSET_ONE:-fallback}"
/etc/eks/bootstrap.sh c ${UNSET_TWO:+--never} "${X}" ${X:+--x "$X"}`},
	{"here-string", `read -r A B <<< "first second third"
/etc/eks/bootstrap.sh "$A" --k "$B"`},
	{"quotes of every style", `/etc/eks/bootstrap.sh 'single $x' "double \"q\" \$x \\ \` + "`" + `" $'ansi \x41 \n' a\ b "mix"'ed'$'\t' ''`},
	{"if and [[ ]]", `V=1.29.3
if [[ $V =~ ^1\.(2[0-9]) ]]; then M=${BASH_REMATCH[1]}; elif [[ -n $V ]]; then M=x; else M=y; fi
[ "$M" -gt 25 ] && N=new || N=old
/etc/eks/bootstrap.sh c --k "$M-$N"`},
	{"loops", `S=
for i in 1 2 3; do S="$S$i,"; done
n=0; while [ $n -lt 3 ]; do n=$((n+1)); done
until [ $n -eq 0 ]; do n=$((n-1)); S="$S."; done
/etc/eks/bootstrap.sh c --k "${S%,}" --n "$n"`},
	{"while read from a heredoc", `L=
while IFS='=' read -r k v; do L="$L${L:+,}$k=$v"; done <<EOF
role=worker
team=ml
EOF
/etc/eks/bootstrap.sh c --kubelet-extra-args "--node-labels=$L"`},
	{"printf -v and string operations", `printf -v P '%s-%03d' node 7
X=prefix.middle.suffix
/etc/eks/bootstrap.sh "${X#*.}" "${X%.*}" "${X//./_}" "${X^^}" "${#X}" "$P" "${X:3:4}"`},
	{"arithmetic", `i=5; ((i++)); ((i*=2))
/etc/eks/bootstrap.sh c --max "$((i + 2 ** 3))" $(( (i % 5) ))`},
	{"nested command substitution and backticks", "X=$(echo $(echo inner) outer)\nY=`echo back`\n/etc/eks/bootstrap.sh \"$X\" $Y"},
	{"eval", `eval 'A=evaluated; B="x y"'
/etc/eks/bootstrap.sh "$A" $B`},
	{"two calls", `/etc/eks/bootstrap.sh first --k 1
/etc/eks/bootstrap.sh second --k 2`},
	{"subshell and group", `X=outer
(X=inner; /etc/eks/bootstrap.sh "$X")
{ X=group; }
/etc/eks/bootstrap.sh "$X"`},
	{"and-or lists and set -e", `set -e
false || R=recovered
true && S=ran
! false
/etc/eks/bootstrap.sh "$R" "$S"`},
	{"IFS splitting into an array", `IFS=, read -ra P <<< "a,b c,d"
/etc/eks/bootstrap.sh "${#P[@]}" "${P[1]}" ${P[2]}`},
	{"text tools in pipelines", `A=$(echo "k=v,role=worker" | cut -d, -f2)
B=$(echo MiXeD | tr 'A-Z' 'a-z')
C=$(echo "--max-pods=10" | sed 's/10/20/')
D=$(printf 'a\nb\nc\n' | head -n 2 | tail -n 1)
E=$(printf 'x y\n' | tr -d ' ')
/etc/eks/bootstrap.sh "$A" "$B" "$C" "$D" "$E"`},
	{"grep conditions", `printf 'ENABLED=yes\nMODE=fast\n' > conf
if grep -q '^ENABLED=yes' conf; then E=on; fi
M=$(grep MODE conf | cut -d= -f2)
/etc/eks/bootstrap.sh c "$E" "$M" "$(grep -c = conf)"`},
	{"sed -i on a written file", `echo 'MAX_PODS=10' > pods.env
sed -i 's/MAX_PODS=10/MAX_PODS=42/' pods.env
. ./pods.env
/etc/eks/bootstrap.sh c --kubelet-extra-args "--max-pods=$MAX_PODS"`},
	{"bash -c with arguments", `export E=exported
bash -c '/etc/eks/bootstrap.sh "$0" "$1" "$E" "$N"' zero one`},
	{"a written script run", `cat > run.sh <<'EOF'
#!/bin/bash
/etc/eks/bootstrap.sh "from-script" "$@"
EOF
chmod +x run.sh
./run.sh a "b c"`},
	{"globs", `mkdir d; touch d/b.conf d/a.conf d/c.txt
L=
for f in d/*.conf; do L="$L $(basename "$f" .conf)"; done
/etc/eks/bootstrap.sh $L "$(dirname d/a.conf)"`},
	{"append redirection and cat", `echo one > log; echo two >> log
/etc/eks/bootstrap.sh "$(cat log | tr '\n' ,)"`},
	{"positional parameters and shift", `set -- a "b c" d
shift
/etc/eks/bootstrap.sh "$#" "$@" "$*"`},
	{"local scoping", `X=global
f() { local X=local; g; }
g() { Y=$X; }
f
/etc/eks/bootstrap.sh "$X" "$Y"`},
	{"input process substitution", `source <(echo 'P=from-procsubst')
L=
while read -r l; do L="$L$l;"; done < <(printf 'a\nb\n')
/etc/eks/bootstrap.sh "$P" "$L" "$(cat <(echo inner))"`},
	{"issue 24: printf -v of a lowered value", `value=PlatForm
printf -v L1 '%s=%s' team "${value,,}"
n=L2; printf -v "$n" '%s\n' kept
eval 'printf -v L3 -- "%s-%s" a b'
f() { local L4; printf -v L4 '%03d' 7; G=$L4; }; f
printf -v 'A[1]' '%s' elem
/etc/eks/bootstrap.sh c --kubelet-extra-args "--node-labels=$L1" "$L2" "$L3" "$G" "${A[1]}" "${L4-unset}"`},
	{"issue 24: case modification", `v=hello-World
/etc/eks/bootstrap.sh "${v,,}" "${v^^}" "${v,}" "${v^}" "${v^^[lo]}" "${v,,[W]}"`},
	{"issue 24: a Latin-1 byte in a comment and a value", "# r\xe9sum\xe9 of the node\nV=caf\xe9\n/etc/eks/bootstrap.sh \"$V\" \"${#V}\""},
	{"issue 24: jq to_entries", `L=$(echo '{"labels":{"team":"ml","tier":"gpu"}}' | jq -r '.labels | to_entries | map("\(.key)=\(.value)") | join(",")')
N=$(printf '{"a":[1,2,{"b":"x"}]}' | jq -c '.a[2]')
K=$(echo '{"z":1,"a":2}' | jq -r 'keys | join(" ")')
/etc/eks/bootstrap.sh c --kubelet-extra-args "--node-labels=$L" "$N" "$K"`},
	{"issue 24: escapes in words expanded as one string", `v='a'\''b' w=a\ b\"c\\d
case x\'y in "x'y") C=matched ;; esac
/etc/eks/bootstrap.sh "$v" "$w" "${u:-d\'e}" "${v//a/\'}" "$C"`},
	{"issue 24: xargs", `A=$(printf '%s\n' a=1 b=2 | xargs | tr ' ' ,)
B=$(printf 'x y z\n' | xargs -n 2 echo pair)
C=$(printf 'one\ntwo\n' | xargs -I {} echo '<{}>')
D=$(printf 'p q\0r\0' | xargs -0 printf '[%s]')
/etc/eks/bootstrap.sh "$A" "$B" "$C" "$D"`},
	{"continuation lines", "/etc/eks/bootstrap.sh c \\\n  --apiserver-endpoint https://x.example.com \\\n  --kubelet-extra-args '--a --b' \\\n  --dns-cluster-ip 10.100.0.10"},
}

// TestEvaluateAgreesWithBash runs every oracle script under real bash, with
// /etc/eks/bootstrap.sh replaced by a stub that records its words (NUL-separated)
// and KUBELET_EXTRA_ARGS, in a temporary directory, and compares with the calls the
// evaluation captures.
func TestEvaluateAgreesWithBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("EKSBOOT_REQUIRE_TOOLS") != "" {
			t.Fatal("bash is required")
		}
		t.Skip("no bash")
	}
	if len(oracleScripts) < 30 {
		t.Fatalf("%d scripts, want at least 30", len(oracleScripts))
	}
	for _, tc := range oracleScripts {
		t.Run(tc.name, func(t *testing.T) {
			want := bashCalls(t, bash, tc.src)
			ev, err := Evaluate(context.Background(), script(tc.src), Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got [][]string
			for _, c := range ev.Calls {
				v, ok := c.Env["KUBELET_EXTRA_ARGS"]
				if !ok {
					v = "<unset>"
				}
				got = append(got, append([]string{"KUBELET_EXTRA_ARGS=" + v}, c.Args...))
				if len(c.Unknown) > 0 {
					t.Errorf("%s: unknown %q", c.Where, c.Unknown)
				}
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("render captured\n%q\nbash passed\n%q", got, want)
			}
		})
	}
}

// bashCalls runs src with bash and returns each bootstrap.sh call: the stub's
// KUBELET_EXTRA_ARGS, then its words.
func bashCalls(t *testing.T, bash, src string) [][]string {
	t.Helper()
	dir, err := os.MkdirTemp("", "eksboot-oracle") // no test name: bash must see a plain path
	must(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	stub := filepath.Join(dir, "bootstrap-stub")
	record := filepath.Join(dir, "calls")
	must(t, os.WriteFile(stub, []byte("#!"+bash+"\nprintf '\\001CALL\\000KUBELET_EXTRA_ARGS=%s\\000' \"${KUBELET_EXTRA_ARGS-<unset>}\" >> "+record+"\nprintf '%s\\000' \"$@\" >> "+record+"\n"), 0o755))
	work := filepath.Join(dir, "work")
	must(t, os.Mkdir(work, 0o755))
	must(t, os.WriteFile(filepath.Join(dir, "script"), []byte(strings.ReplaceAll(src, BootstrapPath, stub)), 0o644))
	argv := []string{bash, filepath.Join(dir, "script")}
	if os.Geteuid() == 0 {
		if unshare, err := exec.LookPath("unshare"); err == nil {
			argv = append([]string{unshare, "-n", "--"}, argv...) // no network at all
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = work
	cmd.Env = bootEnv
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bash: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(record)
	if err != nil {
		t.Fatalf("the stub was not called: %v\n%s", err, stderr.String())
	}
	var calls [][]string
	for _, c := range strings.Split(string(b), "\x01CALL\x00")[1:] {
		calls = append(calls, strings.Split(strings.TrimSuffix(c, "\x00"), "\x00"))
	}
	return calls
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
