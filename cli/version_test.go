package cli

import (
	"bytes"
	"encoding/json"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestBuildVersion(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/eksboot/eksboot", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef"}, {Key: "vcs.time", Value: "2026-12-01T12:27:44Z"}, {Key: "vcs.modified", Value: "true"}},
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	for _, tc := range []struct {
		name string
		bi   *debug.BuildInfo
		tag  string
		want versionInfo
	}{
		{"a checkout build", bi, "v1.2.0", versionInfo{Version: "v1.2.0", Commit: "0123456789abcdef", CommitTime: "2026-12-01T12:27:44Z", Modified: true, GoVersion: "go1.26.8", Platform: platform}},
		{"go install of a tag", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.3.0"}}, "dev", versionInfo{Version: "v1.3.0", GoVersion: "go1.26.8", Platform: platform}},
		{"no build information", nil, "dev", versionInfo{Version: "dev", GoVersion: runtime.Version(), Platform: platform}},
	} {
		if got := buildVersion(tc.bi, tc.tag); got != tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
	got := buildVersion(bi, "v1.2.0").text()
	want := "eksboot v1.2.0\ncommit:      0123456789abcdef (with uncommitted changes)\ncommit time: 2026-12-01T12:27:44Z\ngo:          go1.26.8 " + platform + "\n"
	if got != want {
		t.Errorf("text:\n%s\nwant\n%s", got, want)
	}
}

func TestVersionJSON(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot", "version", "--output", "json"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	var v versionInfo
	if err := json.Unmarshal(stdout.Bytes(), &v); err != nil || v.Version != Version || v.GoVersion != runtime.Version() || !strings.Contains(v.Platform, "/") {
		t.Errorf("version --output json: %q (%v)", stdout.String(), err)
	}
}
