package sim

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// concurrentScript runs the stages of pipelines and process substitutions at once
// (the interpreter gives each stage a goroutine), every stage running commands the
// simulator counts (call, exec), opening, appending to, testing and globbing the
// simulated files (open, stat, access, readDir) and writing to its output. The
// third pipeline's first stage writes more than a pipe holds while the second works
// on the files before it reads: neither may wait for the other. The last runs
// bootstrap.sh twice at once.
const concurrentScript = `w() {
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do
		echo "$1 $i" >> "/tmp/$1"
		[ -f "/tmp/$1" ] && [ -x /etc/eks/bootstrap.sh ] && cat "/tmp/$1" > /dev/null
		for f in /tmp/*; do :; done
		printf '%s\n' "$1" | tee -a /tmp/all > /dev/null
		echo "$1 $i"
	done
}
w a | { w b > /dev/null; cat > /tmp/froma; }
cat <(w d) <(w e | w f) | sort | tee /tmp/sorted | wc -l > /tmp/n
seq 1 40000 | { w g > /dev/null; wc -l > /tmp/many; }
/etc/eks/bootstrap.sh c "$(wc -l < /tmp/all)" "$(cat /tmp/n)" "$(head -n 1 /tmp/froma)" "$(cat /tmp/many)" "$(wc -l < /tmp/e)"
/etc/eks/bootstrap.sh left 1 | /etc/eks/bootstrap.sh right 2
`

// TestPipelineStagesRunAtOnce: the simulator's handlers and file system are safe
// for the stages the interpreter runs at once (go test -race fails on a race), a
// stage blocked on its pipe holds nothing another stage needs, and each
// bootstrap.sh call gets its own shim's words, the Bootstrap hook one call at a
// time.
func TestPipelineStagesRunAtOnce(t *testing.T) {
	type result struct {
		ev  *Evaluation
		err error
	}
	var running atomic.Int32
	done := make(chan result, 1)
	go func() {
		ev, err := Evaluate(context.Background(), script(concurrentScript), Options{
			Image:    map[string]File{BootstrapPath: {Data: []byte(testShim), Mode: 0o755}},
			Metadata: testMetadata,
			Bootstrap: func(context.Context, Call) (map[string]File, error) {
				if running.Add(1) > 1 {
					return nil, errors.New("two Bootstrap calls at once")
				}
				defer running.Add(-1)
				time.Sleep(10 * time.Millisecond)
				return nil, nil
			},
			Limits: Limits{Time: time.Minute}, // the race detector is slow
		})
		done <- result{ev, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the evaluation is still running after 2 minutes: a pipeline's stages wait for each other")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.ev.Calls) != 3 {
		t.Fatalf("calls %d, want 3", len(r.ev.Calls))
	}
	for _, c := range r.ev.Calls[1:] {
		if !reflect.DeepEqual(c.Eksboot, c.Args) || (c.Args[0] != "left" && c.Args[0] != "right") {
			t.Errorf("bootstrap.sh %q ran eksboot bootstrap %q", c.Args, c.Eksboot)
		}
	}
	// six w calls' 16 lines each in /tmp/all; d's and f's 16 lines; a's first; seq's.
	if got, want := r.ev.Calls[0].Eksboot, []string{"c", "96", "32", "a 1", "40000", "16"}; !reflect.DeepEqual(got, want) {
		t.Errorf("eksboot got %q, want %q", got, want)
	}
	for _, f := range []string{"a", "b", "d", "e", "f", "g"} {
		var want strings.Builder
		for i := 1; i <= 16; i++ {
			want.WriteString(f + " " + strconv.Itoa(i) + "\n")
		}
		if got := string(r.ev.Files["/tmp/"+f].Data); got != want.String() {
			t.Errorf("/tmp/%s holds %q, want %q", f, got, want.String())
		}
	}
}
