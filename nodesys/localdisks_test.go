package nodesys

import (
	"reflect"
	"strings"
	"testing"
)

func TestLocalDisksArgs(t *testing.T) {
	for _, c := range []struct {
		name, strategy, mountPath string
		disabled                  []string
		want                      []string
	}{
		// nodeadm e2e local-disks (awslabs/amazon-eks-ami@81fec2e8
		// nodeadm/test/e2e/cases/local-disks/config.yaml): strategy RAID0 alone.
		{"nodeadm e2e local-disks", "RAID0", "", nil, []string{"raid0"}},
		{"raid10", "RAID10", "", nil, []string{"raid10"}},
		{"mount", "Mount", "", nil, []string{"mount"}},
		{"bootstrap.sh mode", "raid0", "", nil, []string{"raid0"}},
		{"bootstrap.sh none", "none", "", nil, []string{"none"}},
		{"mount path", "RAID0", "/mnt/fast", nil, []string{"raid0", "--dir", "/mnt/fast"}},
		{"default path with its slash", "RAID0", "/mnt/k8s-disks/", nil, []string{"raid0", "--dir", "/mnt/k8s-disks"}},
		{
			"disabled mounts in order", "RAID0", "/data",
			[]string{"PodLogs", "Containerd"},
			[]string{"raid0", "--dir", "/data", "--no-bind-pods-logs", "--no-bind-containerd"},
		},
		{
			"disabled mount twice", "RAID10", "",
			[]string{"Containerd", "Containerd"},
			[]string{"raid10", "--no-bind-containerd"},
		},
		{"no strategy: nothing runs", "", "/data", []string{"PodLogs"}, nil},
	} {
		got, err := LocalDisksArgs(c.strategy, c.mountPath, c.disabled)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %q (%v), want %q", c.name, got, err, c.want)
		}
	}
}

func TestLocalDisksArgsErrors(t *testing.T) {
	for _, c := range []struct {
		strategy, mountPath string
		disabled            []string
		want                []string
	}{
		{"raid5", "", nil, []string{`spec.instance.localStorage.strategy: "raid5", want RAID0, RAID10 or Mount`}},
		{"Raid0", "", nil, []string{`spec.instance.localStorage.strategy: "Raid0"`}},
		{"RAID0", "mnt/disks", nil, []string{`spec.instance.localStorage.mountPath: "mnt/disks": want an absolute path`}},
		{"RAID0", "/mnt/../etc", nil, []string{`mountPath: "/mnt/../etc": want a clean path`}},
		{"RAID0", "/mnt//x", nil, []string{`want a clean path`}},
		{"RAID0", "/", nil, []string{`mountPath: "/": the root directory`}},
		{"RAID0", "/mnt/my disks", nil, []string{`mountPath: "/mnt/my disks": whitespace`}},
		{"RAID0", "/mnt/x\ny", nil, []string{`whitespace, control characters`}},
		{"RAID0", "/mnt/%i", nil, []string{`mountPath: "/mnt/%i"`}},
		{"RAID0", "", []string{"Kubelet", "SOCI", "podlogs"}, []string{
			`spec.instance.localStorage.disabledMounts[0]: "Kubelet", want Containerd or PodLogs`,
			`spec.instance.localStorage.disabledMounts[1]: SOCI: not supported by eksboot yet`,
			`spec.instance.localStorage.disabledMounts[2]: "podlogs"`,
		}},
		{"x", "rel", []string{"y"}, []string{"strategy", "mountPath", "disabledMounts[0]"}},
	} {
		got, err := LocalDisksArgs(c.strategy, c.mountPath, c.disabled)
		if err == nil {
			t.Errorf("%q %q %q: got %q, want an error", c.strategy, c.mountPath, c.disabled, got)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%q %q %q: error %q\nlacks %q", c.strategy, c.mountPath, c.disabled, err, w)
			}
		}
	}
}
