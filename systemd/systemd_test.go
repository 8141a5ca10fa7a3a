package systemd

import "testing"

func TestUnitName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"bare name gets service", "kubelet", "kubelet.service"},
		{"service kept", "kubelet.service", "kubelet.service"},
		{"target kept", "default.target", "default.target"},
		{"socket kept", "containerd.socket", "containerd.socket"},
		{"dotted name gets service", "foo.bar", "foo.bar.service"},
		{"suffix alone is a name", ".service", ".service.service"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := UnitName(tc.in); got != tc.want {
				t.Errorf("UnitName(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestJobErrorError(t *testing.T) {
	tests := []struct {
		name string
		err  *JobError
		want string
	}{
		{
			name: "job failed",
			err:  &JobError{Op: "restart", Unit: "kubelet.service", Result: "failed"},
			want: "restart kubelet.service: job failed",
		},
		{
			name: "dependency",
			err:  &JobError{Op: "start", Unit: "kubelet.service", Result: "dependency"},
			want: "start kubelet.service: job dependency",
		},
		{
			name: "done but failed",
			err:  &JobError{Op: "restart", Unit: "kubelet.service", Result: "done", ActiveState: "failed"},
			want: "restart kubelet.service: job done but unit is failed",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.err.Error(); got != tc.want {
				t.Errorf("Error() = %q, want %q", got, tc.want)
			}
		})
	}
}
