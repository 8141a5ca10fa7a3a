package nodesys

import (
	"bytes"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/unit"
)

func TestLogindConfig(t *testing.T) {
	tests := []struct {
		delay time.Duration
		want  string
	}{
		{150 * time.Second, "150"},
		{time.Second, "1"},
		{1500 * time.Millisecond, "2"}, // rounded up: never shorter than the grace period
	}
	for _, tc := range tests {
		b, err := LogindConfig(tc.delay)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := unit.DeserializeOptions(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%v: not a valid unit file: %v\n%s", tc.delay, err, b)
		}
		if len(opts) != 1 || opts[0].Section != "Login" || opts[0].Name != "InhibitDelayMaxSec" || opts[0].Value != tc.want {
			t.Errorf("LogindConfig(%v) = %q, want [Login] InhibitDelayMaxSec=%s", tc.delay, b, tc.want)
		}
	}
	if _, err := LogindConfig(0); err == nil {
		t.Error("LogindConfig(0): want an error")
	}
}
