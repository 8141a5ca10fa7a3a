package kubeletconf

import (
	"slices"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/kubeletconf/kubeletflags"
	"github.com/eksboot/eksboot/unitenv"
)

func extraArgsName(int) string { return "--kubelet-extra-args" }

// al2Args is AL2-era user data's --kubelet-extra-args: flags that today's kubelets
// removed but whose jobs are done another way, between flags they keep.
const al2Args = `--node-labels=team=a --container-runtime remote --network-plugin cni --cni-bin-dir /opt/cni/bin ` +
	`--cni-conf-dir=/etc/cni/net.d --cloud-provider aws --pod-infra-container-image=602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/pause:3.10 ` +
	`--docker-endpoint unix:///var/run/docker.sock --containerd=/run/containerd/containerd.sock --boot-id-file=/proc/sys/kernel/random/boot_id ` +
	`--global-housekeeping-interval=1m --logtostderr=true --max-pods=58`

func TestAL2ArgsJoinToday(t *testing.T) {
	for _, minor := range []int{35, 37, 38} {
		got, problems := CheckArgs(Version{1, minor, 0}, unitenv.SplitWords(al2Args), extraArgsName)
		if len(problems) > 0 {
			t.Errorf("1.%d: problems %q", minor, problems)
		}
		want := []string{"--node-labels=team=a", "--max-pods=58"}
		if minor == 35 { // the cAdvisor flags went in 1.37
			want = []string{
				"--node-labels=team=a", "--containerd=/run/containerd/containerd.sock",
				"--boot-id-file=/proc/sys/kernel/random/boot_id", "--global-housekeeping-interval=1m", "--max-pods=58",
			}
		}
		if !slices.Equal(got.Words, want) || !got.Dropped {
			t.Errorf("1.%d: words %q (dropped %v), want %q", minor, got.Words, got.Dropped, want)
		}
		for _, flag := range []string{"--container-runtime", "--network-plugin", "--cni-bin-dir", "--cni-conf-dir", "--cloud-provider", "--pod-infra-container-image", "--docker-endpoint", "--logtostderr"} {
			if !slices.ContainsFunc(got.Warnings, func(w string) bool {
				return strings.Contains(w, `"`+flag) && strings.Contains(w, "left out for kubelet 1.")
			}) {
				t.Errorf("1.%d: no warning names %s: %q", minor, flag, got.Warnings)
			}
		}
		if got.Config["maxPods"] != float64(58) {
			t.Errorf("1.%d: config from flags %v, want maxPods 58", minor, got.Config)
		}
	}
	// 1.33 still has --pod-infra-container-image and the cAdvisor flags, deprecated:
	// they stay, with a word each.
	got, problems := CheckArgs(Version{1, 33, 0}, []string{"--pod-infra-container-image=x/pause:3.10", "--containerd=/run/c.sock"}, extraArgsName)
	if len(problems) > 0 || got.Dropped || len(got.Warnings) != 2 || !strings.Contains(got.Warnings[1], "--containerd is deprecated in kubelet 1.33") {
		t.Errorf("1.33: %+v %q, want the flags kept with a deprecation warning each", got, problems)
	}
}

// TestRefusedAsTheKubeletRefuses: each argument a kubelet of that minor refuses is a
// problem naming the input, the argument and the kubelet.
func TestRefusedAsTheKubeletRefuses(t *testing.T) {
	for _, tc := range []struct {
		minor int
		arg   string
		want  string
	}{
		{35, "--max-pods=abc", "--max-pods takes a whole number"},
		{35, "--max-pods=99999999999", "--max-pods takes a whole number"},
		{35, "--nosuch=1", "kubelet 1.35 has no flag --nosuch"},
		{35, "--max-pod=5", "did you mean --max-pods?"},
		{37, "--node-labels=node-role.kubernetes.io/worker=true", `key "node-role.kubernetes.io/worker" is in the kubernetes.io or k8s.io namespace`},
		{37, "--node-labels=x.k8s.io/a=b", "kubernetes.io or k8s.io namespace"},
		{37, `--node-labels="team=a b"`, `the value "a b" of team must be`},
		{37, "--node-labels=Team/x=y", "not a lowercase DNS subdomain"},
		{37, "--register-with-taints=dedicated=gpu:NoRun", `effect "NoRun"`},
		{37, "--register-with-taints=dedicated=gpu", `taint "dedicated=gpu"`},
		{37, "--register-with-taints=dedicated", "has no effect"},
		{37, "--register-with-taints=a:NoSchedule,a:NoSchedule", "repeats key a"},
		{35, "--register-schedulable=false", "removed in 1.34): register the node with a taint"},
		{38, "--pod-max-pids", "--pod-max-pids needs a value"},
		{37, "--fail-swap-on=maybe", "--fail-swap-on is true or false"},
		{37, "--feature-gates=A=yes", "name=true or name=false pairs"},
		{37, "--eviction-hard=memory.available=100Mi", "name<value pairs"},
		{37, "--help", "prints its help and exits"},
		{37, "-x", "has no short flag -x"},
		{37, "run", "not a flag"},
		{37, "--a=b -- c", "takes no arguments after"},
	} {
		_, problems := CheckArgs(Version{1, tc.minor, 2}, unitenv.SplitWords(tc.arg), extraArgsName)
		if len(problems) == 0 || !strings.Contains(strings.Join(problems, "\n"), tc.want) {
			t.Errorf("1.%d %s: problems %q, want one with %q", tc.minor, tc.arg, problems, tc.want)
			continue
		}
		if p := problems[0]; !strings.HasPrefix(p, "--kubelet-extra-args: ") || !strings.Contains(p, "kubelet 1.") {
			t.Errorf("1.%d %s: %q does not name the input and the kubelet", tc.minor, tc.arg, p)
		}
	}
}

// TestAcceptedAsTheKubeletAccepts: what the kubelet accepts is never a problem.
func TestAcceptedAsTheKubeletAccepts(t *testing.T) {
	for _, args := range []string{
		"--node-labels=node.kubernetes.io/lifecycle=spot,kubelet.kubernetes.io/x=y,topology.kubernetes.io/zone=a,example.com/role=worker,bare",
		`--node-labels=" a = b , c=d"`,
		"--register-with-taints=dedicated=gpu:NoSchedule,spot:PreferNoSchedule,gone-",
		"--register-with-taints=",
		"--max-pods=0x20 --max-pods 110 --max_pods=+7",
		"--feature-gates=InPlacePodVerticalScaling=true --feature-gates=RotateKubeletServerCertificate=false",
		"--eviction-hard=memory.available<100Mi,nodefs.available<10% --eviction-minimum-reclaim=memory.available=0",
		"--fail-swap-on --fail-swap-on=false -v=4 -v 2 --v=3",
		"--cloud-provider=external --cloud-provider=",
		"--version=false",
		"--",
	} {
		got, problems := CheckArgs(Version{1, 37, 2}, unitenv.SplitWords(args), extraArgsName)
		if len(problems) > 0 || got.Dropped {
			t.Errorf("%s: problems %q, dropped %v; the kubelet accepts it", args, problems, got.Dropped)
		}
	}
}

func TestNewerAndOlderKubelets(t *testing.T) {
	minors := kubeletflags.Minors()
	newer := Version{1, minors[len(minors)-1] + 1, 0}
	got, problems := CheckArgs(newer, []string{"--nosuch=1", "-q", "--pod-infra-container-image=x"}, extraArgsName)
	if len(problems) > 0 || len(got.Warnings) != 3 || !slices.Equal(got.Words, []string{"--nosuch=1", "-q"}) {
		t.Errorf("kubelet %s: %+v %q, want two warnings for the unknown flags and the removed one left out", newer, got, problems)
	}
	got, problems = CheckArgs(Version{1, 22, 0}, []string{"--nosuch=1", "--network-plugin=cni"}, extraArgsName)
	if len(problems) > 0 || got.Dropped {
		t.Errorf("kubelet 1.22: %+v %q, want its flags not judged (older than the table)", got, problems)
	}
}

func TestFlagsLayOverTheConfig(t *testing.T) {
	cfg := &KubeletConfiguration{
		MaxPods: 29, EvictionHard: map[string]string{"memory.available": "100Mi", "nodefs.available": "10%"},
		FeatureGates: map[string]bool{"A": true, "B": true},
	}
	args, _ := CheckArgs(Version{1, 37, 0}, []string{"--max-pods=58", "--eviction-hard=pid.available<1%", "--feature-gates=B=false,C=true"}, extraArgsName)
	got, err := WithFlags(cfg, args.Config)
	if err != nil {
		t.Fatal(err)
	}
	if got.MaxPods != 58 || len(got.EvictionHard) != 1 || got.EvictionHard["pid.available"] != "1%" ||
		!got.FeatureGates["A"] || got.FeatureGates["B"] || !got.FeatureGates["C"] {
		t.Errorf("WithFlags = maxPods %d, evictionHard %v, featureGates %v; want the flag's max pods and map, the gates merged", got.MaxPods, got.EvictionHard, got.FeatureGates)
	}
	if cfg.MaxPods != 29 || !cfg.FeatureGates["B"] {
		t.Error("WithFlags changed its input")
	}
}
