package packer

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestFakeImageIsShapedLikeTheEKSImages checks what fake-image.sh lays out against
// the facts of each family's EKS image that a bootstrapper reads (README.md, "The
// local source"): files that must be there and what they must say, and files that
// must not be there.
func TestFakeImageIsShapedLikeTheEKSImages(t *testing.T) {
	t.Parallel()
	const kubelet = "v1.35.0-eks-4a1b2c3"
	tests := []struct {
		family string
		// has maps a path to lines its content must hold ("" for an empty file;
		// "mode 0755" for the mode; "link -> X" for a link).
		has    map[string][]string
		absent []string
		// versions maps an executable to its --version line.
		versions map[string]string
	}{
		{"al2023", map[string][]string{
			"etc/os-release":                                                    {`ID="amzn"`, `VERSION_ID="2023"`, `PLATFORM_ID="platform:al2023"`},
			"etc/eks/kubelet-version.txt":                                       {"Kubernetes " + kubelet},
			"etc/eks/containerd-version.txt":                                    {"containerd github.com/containerd/containerd/v2 2.1.5 fb4c30d4ede3531652d86197bf3fc9515e5276d9"},
			"etc/eks/image-credential-provider/ecr-credential-provider":         {"mode 0755"},
			"etc/eks/pause.tar":                                                 {"mode 0644"},
			"etc/eks/bootstrap.sh":                                              {"mode 0755", "exit 1"},
			"etc/systemd/system/kubelet.service":                                {"EnvironmentFile=/etc/eks/kubelet/environment", "ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS", "Slice=runtime.slice"},
			"etc/systemd/system/containerd.service.d/00-runtime-slice.conf":     {"[Service]", "Slice=runtime.slice"},
			"etc/systemd/system/nodeadm-config.service":                         {"ExecStart=/usr/bin/nodeadm init --skip run", "WantedBy=multi-user.target"},
			"etc/systemd/system/nodeadm-run.service":                            {"ExecStart=/usr/bin/nodeadm init --skip config", "WantedBy=multi-user.target"},
			"etc/systemd/system/multi-user.target.wants/nodeadm-config.service": {"link -> /etc/systemd/system/nodeadm-config.service"},
			"etc/systemd/system/multi-user.target.wants/nodeadm-run.service":    {"link -> /etc/systemd/system/nodeadm-run.service"},
			"usr/bin/aws":       {"mode 0755"},
			"usr/sbin/runc":     {"mode 0755"},
			"usr/bin/nodeadm":   {"mode 0755"},
			"etc/eks/nodeadm.d": {"dir 0755"},
		}, []string{
			"usr/bin/aws-iam-authenticator", "etc/eks/containerd/containerd-config.toml", "etc/eks/eni-max-pods.txt",
			"etc/eks/image-credential-provider/config.json", "etc/kubernetes/kubelet/kubelet-config.json", "var/lib/kubelet/kubeconfig",
		}, map[string]string{
			"usr/bin/kubelet":    "Kubernetes " + kubelet,
			"usr/bin/containerd": "containerd github.com/containerd/containerd/v2 2.1.5 fb4c30d4ede3531652d86197bf3fc9515e5276d9",
		}},
		{"al2", map[string][]string{
			"etc/os-release":                {`ID="amzn"`, `VERSION_ID="2"`},
			"etc/eks/bootstrap.sh":          {"mode 0755"},
			"usr/bin/aws-iam-authenticator": {"mode 0755"},
		}, []string{
			"etc/eks/kubelet-version.txt", "etc/systemd/system/nodeadm-config.service", "etc/systemd/system/multi-user.target.wants",
			"etc/eks/containerd/containerd-config.toml",
		}, map[string]string{
			"usr/bin/kubelet":    "Kubernetes " + kubelet,
			"usr/bin/containerd": "containerd github.com/containerd/containerd 1.7.27 05044ec0a9a75232cad458027ca83437aae3f4da",
		}},
	}
	for i := range tests {
		// Both: the shell and tools, a static busybox and its applets.
		tests[i].has["bin/busybox"] = []string{"mode 0755"}
		tests[i].has["bin/sh"] = []string{"link -> busybox"}
		tests[i].has["bin/mv"] = []string{"link -> busybox"}
	}
	for _, tc := range tests {
		t.Run(tc.family, func(t *testing.T) {
			t.Parallel()
			root := fakeImage(t, tc.family, kubelet)
			got := tree(t, root)
			for path, wants := range tc.has {
				entry, ok := got[path]
				if !ok {
					t.Errorf("%s: missing", path)
					continue
				}
				for _, want := range wants {
					switch {
					case strings.HasPrefix(want, "mode "):
						if !strings.HasPrefix(entry, "file "+strings.TrimPrefix(want, "mode ")+" ") {
							t.Errorf("%s: %.40q, want a file with %s", path, entry, want)
						}
					case strings.HasPrefix(want, "link -> "), strings.HasPrefix(want, "dir "):
						if entry != want {
							t.Errorf("%s: %q, want %q", path, entry, want)
						}
					default:
						if !strings.Contains("\n"+entry+"\n", "\n"+want+"\n") && !strings.Contains(entry, " "+want+"\n") {
							t.Errorf("%s has no line %q:\n%s", path, want, entry)
						}
					}
				}
			}
			for _, path := range tc.absent {
				if entry, ok := got[path]; ok {
					t.Errorf("%s: %.40q, want none (the %s image has none)", path, entry, tc.family)
				}
			}
			for exe, want := range tc.versions {
				code, out := command(t, ".", nil, filepath.Join(root, exe), "--version")
				if code != 0 || out != want+"\n" {
					t.Errorf("%s --version: exit %d, %q, want %q", exe, code, out, want)
				}
			}
			if tc.family == "al2023" {
				// The stub: a banner and exit status 1, whatever the arguments.
				code, out := command(t, ".", nil, filepath.Join(root, "etc/eks/bootstrap.sh"), "my-cluster")
				if code != 1 || !strings.Contains(out, "nodeadm") {
					t.Errorf("the stub bootstrap.sh: exit %d, %q; want 1 and a banner naming nodeadm", code, out)
				}
			}
		})
	}
}
