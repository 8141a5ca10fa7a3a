package kubeletconf

import (
	"encoding/json"
	"strings"
	"testing"
)

// userConfig decodes a user's partial configuration over an empty one, naming every
// top-level field spec.kubelet.config.
func userConfig(t *testing.T, doc string) (*KubeletConfiguration, func(string) string) {
	t.Helper()
	var cfg KubeletConfiguration
	if err := json.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return &cfg, func(string) string { return "spec.kubelet.config" }
}

// typoSignal is memory.available with the typo of the issue that asked for these
// checks, spelt out so that the spelling linter lets it be.
var typoSignal = strings.Replace("memory.available", "ilable", "ilble", 1)

func TestConfigRefusedAsTheKubeletRefuses(t *testing.T) {
	for _, tc := range []struct {
		minor int
		doc   string
		want  string
	}{
		{37, `{"evictionHard": {"` + typoSignal + `": "100Mi"}}`, "spec.kubelet.config.evictionHard." + typoSignal + ": kubelet 1.37 refuses it: " + typoSignal + " is not an eviction signal (did you mean memory.available?)"},
		{28, `{"evictionHard": {"containerfs.available": "10%"}}`, "containerfs.available is not an eviction signal"},
		{37, `{"evictionHard": {"memory.available": "-1Mi"}}`, "want a positive quantity"},
		{37, `{"evictionHard": {"nodefs.available": "101%"}}`, "want a percentage from 0% to 100%"},
		{37, `{"evictionSoft": {"memory.available": "200Mi"}}`, "a soft threshold needs a grace period"},
		{37, `{"evictionSoftGracePeriod": {"memory.available": "soon"}}`, "want a duration"},
		{37, `{"evictionMinimumReclaim": {"memory.available": "0%"}}`, "want a positive percentage"},
		{37, `{"kubeReserved": {"gpu": "1"}}`, "cannot reserve gpu"},
		{37, `{"systemReserved": {"memory": "lots"}}`, "want a quantity of at least 0"},
		{37, `{"cpuManagerPolicy": "bogus"}`, `spec.kubelet.config.cpuManagerPolicy: kubelet 1.37 refuses it: "bogus": want none or static`},
		{37, `{"memoryManagerPolicy": "static"}`, "want None or Static"},
		{37, `{"topologyManagerPolicy": "best_effort"}`, "want none, best-effort, restricted or single-numa-node"},
		{37, `{"cgroupDriver": "system"}`, "want cgroupfs or systemd"},
		{37, `{"enforceNodeAllocatable": ["pods", "kube-reserved"]}`, "kube-reserved needs kubeReservedCgroup"},
		{37, `{"maxPods": -1}`, "maxPods: kubelet 1.37 refuses it: -1: want 0 or more"},
		{37, `{"imageGCHighThresholdPercent": 80}`, "imageGCLowThresholdPercent 80 must be less than imageGCHighThresholdPercent 80"},
		{37, `{"containerLogMaxFiles": 1}`, "want 2 or more"},
		{37, `{"readOnlyPort": 70000}`, "want 0 to 65535"},
		{37, `{"shutdownGracePeriod": "500ms"}`, "want 0 or at least 1s"},
		{37, `{"reservedSystemCPUs": "3-1"}`, "want a CPU list"},
		{37, `{"podLogsDir": "var/log/pods"}`, "want a clean absolute path"},
		{38, `{"featureGates": {"DynamicResourceAllocation": true}}`, "spec.kubelet.config.featureGates.DynamicResourceAllocation: kubelet 1.38 refuses it: it has no feature gate DynamicResourceAllocation (removed in 1.38)"},
		{35, `{"featureGates": {"InPlacePodVerticalScaling": false}}`, "InPlacePodVerticalScaling is GA and locked to true"},
		{33, `{"featureGates": {"DisableKubeletCloudCredentialProviders": true}}`, "no feature gate DisableKubeletCloudCredentialProviders (removed in 1.33)"},
		{37, `{"featureGates": {"NoSuchGate": true}}`, `no feature gate NoSuchGate ("unrecognized feature gate")`},
		{37, `{"featureGates": {"InplacePodVerticalScaling": true}}`, `did you mean InPlacePodVerticalScaling?`},
	} {
		cfg, from := userConfig(t, tc.doc)
		_, problems := CheckConfig(Version{1, tc.minor, 0}, cfg, from)
		if !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("1.%d %s: problems %q, want one with %q", tc.minor, tc.doc, problems, tc.want)
		}
	}
}

func TestConfigAcceptedAsTheKubeletAccepts(t *testing.T) {
	for _, doc := range []string{
		`{"evictionHard": {"memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "0%", "imagefs.available": "100%", "pid.available": "1.5%", "containerfs.available": "5%"},
		  "evictionSoft": {"memory.available": "200Mi"}, "evictionSoftGracePeriod": {"memory.available": "1m30s"},
		  "evictionMinimumReclaim": {"memory.available": "0", "nodefs.available": "500Mi", "imagefs.available": "2%"}}`,
		`{"kubeReserved": {"cpu": "70m", "memory": "442Mi", "ephemeral-storage": "1Gi", "pid": "100"}, "systemReserved": {"cpu": "0"}}`,
		`{"cpuManagerPolicy": "static", "memoryManagerPolicy": "Static", "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}`,
		`{"enforceNodeAllocatable": ["pods", "kube-reserved"], "kubeReservedCgroup": "/runtime"}`,
		`{"imageGCHighThresholdPercent": 90, "imageGCLowThresholdPercent": 70, "maxPods": 0, "readOnlyPort": 0, "port": 10250}`,
		`{"shutdownGracePeriod": "2m", "shutdownGracePeriodCriticalPods": "30s", "reservedSystemCPUs": "0-1,4"}`,
	} {
		cfg, from := userConfig(t, doc)
		if _, problems := CheckConfig(Version{1, 37, 0}, cfg, from); len(problems) > 0 {
			t.Errorf("%s: problems %q; the kubelet accepts it", doc, problems)
		}
	}
}

// TestConfigNamesWhereAFieldCameFrom: eksboot's own values are named by the file, a
// flag's by the flag.
func TestConfigNamesWhereAFieldCameFrom(t *testing.T) {
	cfg := &KubeletConfiguration{CPUManagerPolicy: "bogus", MaxPods: -2}
	_, problems := CheckConfig(Version{1, 37, 0}, cfg, func(f string) string {
		if f == "cpuManagerPolicy" {
			return `--kubelet-extra-args "--cpu-manager-policy=bogus"`
		}
		return ""
	})
	got := strings.Join(problems, "\n")
	for _, want := range []string{`--kubelet-extra-args "--cpu-manager-policy=bogus" (cpuManagerPolicy): kubelet 1.37 refuses it`, ConfigPath + " maxPods: kubelet 1.37"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems %q, want one with %q", problems, want)
		}
	}
}

func TestConfigGateWarnings(t *testing.T) {
	cfg, from := userConfig(t, `{"featureGates": {"DynamicResourceAllocation": true, "InPlacePodVerticalScaling": true}}`)
	warnings, problems := CheckConfig(Version{1, 35, 0}, cfg, from)
	if len(problems) > 0 || len(warnings) != 2 || !strings.Contains(warnings[0], "DynamicResourceAllocation is GA and locked to true in kubelet 1.35: setting it does nothing") {
		t.Errorf("1.35: warnings %q, problems %q; want two warnings for the locked gates", warnings, problems)
	}
	warnings, problems = CheckConfig(Version{1, 39, 0}, cfg, from)
	if len(problems) != 0 || len(warnings) != 2 || !strings.Contains(warnings[0], "kubelet 1.39 is newer than the feature gates eksboot knows (1.38, from v1.38.0-beta.0)") {
		t.Errorf("1.39: warnings %q, problems %q; want warnings only", warnings, problems)
	}
}
