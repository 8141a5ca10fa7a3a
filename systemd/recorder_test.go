package systemd

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
)

func TestRecorder(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name      string
		run       func(r *Recorder) error
		wantCalls []string
	}{
		{
			name: "bootstrap sequence",
			run: func(r *Recorder) error {
				return errors.Join(
					r.Reload(ctx),
					r.Enable(ctx, "kubelet", "containerd.service"),
					r.Restart(ctx, "kubelet"),
				)
			},
			wantCalls: []string{
				"daemon-reload",
				"enable kubelet.service containerd.service",
				"restart kubelet.service",
			},
		},
		{
			name:      "enable nothing records nothing",
			run:       func(r *Recorder) error { return r.Enable(ctx) },
			wantCalls: nil,
		},
		{
			name: "active state follows start",
			run: func(r *Recorder) error {
				if err := r.Start(ctx, "sandbox-image"); err != nil {
					return err
				}
				for _, c := range []struct{ unit, want string }{
					{"sandbox-image", "active"},
					{"kubelet", "inactive"},
				} {
					got, err := r.ActiveState(ctx, c.unit)
					if err != nil {
						return err
					}
					if got != c.want {
						return fmt.Errorf("ActiveState(%s) = %q, want %q", c.unit, got, c.want)
					}
				}
				return nil
			},
			wantCalls: []string{"start sandbox-image.service", "is-active sandbox-image.service", "is-active kubelet.service"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r Recorder
			if err := tc.run(&r); err != nil {
				t.Fatal(err)
			}
			r.Close()
			if got := r.Calls(); !slices.Equal(got, tc.wantCalls) {
				t.Errorf("Calls() = %q, want %q", got, tc.wantCalls)
			}
		})
	}
}

func TestRecorderConcurrent(t *testing.T) {
	var r Recorder
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			_ = r.Restart(context.Background(), fmt.Sprintf("unit-%d", i))
			_, _ = r.ActiveState(context.Background(), "kubelet")
		})
	}
	wg.Wait()
	if got, want := len(r.Calls()), 40; got != want {
		t.Errorf("len(Calls()) = %d, want %d", got, want)
	}
}
