package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"testing"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/imds"
	"github.com/eksboot/eksboot/internal/goldencase"
)

// TestOnStepFollowsTheRun: Env.OnStep hears each step of a run start and end, in
// the checklist's order, and the failing step's error.
func TestOnStepFollowsTheRun(t *testing.T) {
	c, err := goldencase.Load(filepath.Join(goldenDir, "01-m5large-usw2-vpc192"))
	must(t, err)
	var got []string
	record := func(e StepEvent) {
		switch {
		case !e.Ended:
			got = append(got, "start "+e.Step)
		case e.Err != nil:
			got = append(got, fmt.Sprintf("fail %s: %v", e.Step, e.Err))
		default:
			got = append(got, "end "+e.Step)
		}
	}
	if _, err := runCaseWith(t, c, zap.NewNop(), func(env *Env) { env.OnStep = record }); err != nil {
		t.Fatal(err)
	}
	want := []string{"start lock", "end lock", "start instance facts", "end instance facts", "start compute", "end compute", "start diff", "end diff", "start write", "end write"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}

	got = nil
	refused := errors.New("refused")
	if _, err := runCaseWith(t, c, zap.NewNop(), func(env *Env) {
		env.OnStep = record
		env.IMDS = func(context.Context, imds.Options) (*imds.Facts, error) { return nil, refused }
	}); !errors.Is(err, refused) {
		t.Fatalf("run: %v, want the IMDS error", err)
	}
	if want := []string{"start lock", "end lock", "start instance facts", "fail instance facts: refused"}; !reflect.DeepEqual(got, want) {
		t.Errorf("steps %q, want %q", got, want)
	}
}
