package kubeletconf

import (
	"bytes"
	"strings"
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

func TestBuildShutdown(t *testing.T) {
	in := Input{
		ClusterDNS: []string{"10.100.0.10"}, MaxPods: 29, CPUs: 2, ProviderID: "aws:///us-west-2a/i-1", KubeletVersion: Version{1, 32, 9},
		ShutdownGracePeriod: 150 * time.Second, ShutdownGracePeriodCriticalPods: 30 * time.Second,
	}
	cfg, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"shutdownGracePeriod": "2m30s"`, `"shutdownGracePeriodCriticalPods": "30s"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("kubelet-config.json lacks %s:\n%s", want, b)
		}
	}
	in.ShutdownGracePeriod, in.ShutdownGracePeriodCriticalPods = 0, 0
	cfg, _ = Build(in)
	if b, _ := Marshal(cfg); strings.Contains(string(b), "shutdownGracePeriod") {
		t.Errorf("graceful shutdown off, but the config has it:\n%s", b)
	}
	in.ShutdownGracePeriod, in.ShutdownGracePeriodCriticalPods = 10*time.Second, 20*time.Second
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "shutdownGracePeriodCriticalPods: 20s exceeds shutdownGracePeriod 10s") {
		t.Errorf("err = %v", err)
	}
}
