// Package imagefixture lays out, under a folder, what an EKS node image holds that
// eksboot reads at boot, for tests and the demo: the Amazon Linux 2023 EKS image
// (AL2023) with a given kubelet and containerd, and the Amazon Linux 2 EKS image's
// files bootstrap.sh edited in place (AL2). It writes only this project's own
// stand-ins: empty executables where the image has binaries, version files in the
// image's format. `eksboot render` reads the same image in memory (Files), so this
// package ships in eksboot's binary: it imports no testing package.
package imagefixture

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/kubeletconf"
)

// AL2023 describes an Amazon Linux 2023 EKS image.
type AL2023 struct {
	// KubeletVersion is `kubelet --version` after "Kubernetes ", e.g.
	// "v1.35.1-eks-113cf36".
	KubeletVersion string
	// ContainerdVersion is containerd's version, e.g. "2.1.5" (default).
	ContainerdVersion string
}

// al2023Kubelet is the image's kubelet.service: its flags come from
// /etc/eks/kubelet/environment, which nodeadm writes (eksboot replaces the unit).
const al2023Kubelet = `[Unit]
Description=Kubernetes Kubelet
After=containerd.service
Wants=containerd.service

[Service]
Slice=runtime.slice
EnvironmentFile=/etc/eks/kubelet/environment
ExecStartPre=/sbin/iptables -P FORWARD ACCEPT -w 5
ExecStart=/usr/bin/kubelet $NODEADM_KUBELET_ARGS
Restart=on-failure
RestartSec=5
KillMode=process

[Install]
WantedBy=multi-user.target
`

// Files returns the image's files as node path -> content, and the executables.
func (a AL2023) Files() (files map[string]string, executables []string) {
	cv := a.ContainerdVersion
	if cv == "" {
		cv = "2.1.5"
	}
	module := "github.com/containerd/containerd"
	if cv[0] != '1' {
		module += "/v2"
	}
	files = map[string]string{
		"/etc/os-release":                                                "NAME=\"Amazon Linux\"\nVERSION=\"2023\"\nID=\"amzn\"\nID_LIKE=\"fedora\"\nVERSION_ID=\"2023\"\nPLATFORM_ID=\"platform:al2023\"\nPRETTY_NAME=\"Amazon Linux 2023.9.20251117\"\n",
		"/etc/eks/kubelet-version.txt":                                   "Kubernetes " + a.KubeletVersion + "\n",
		"/etc/eks/containerd-version.txt":                                fmt.Sprintf("containerd %s %s 0123456789abcdef0123456789abcdef01234567\n", module, cv),
		"/etc/eks/pause.tar":                                             "",
		"/etc/systemd/system/kubelet.service":                            al2023Kubelet,
		"/etc/systemd/system/containerd.service.d/00-runtime-slice.conf": "[Service]\nSlice=runtime.slice\n",
		"/proc/mounts":                                                   "/dev/nvme0n1p1 / xfs rw,noatime 0 0\ncgroup2 /sys/fs/cgroup cgroup2 rw,nosuid,nodev,noexec,relatime 0 0\nbpf /sys/fs/bpf bpf rw,nosuid,nodev,noexec,relatime,mode=700 0 0\n",
		"/proc/sys/crypto/fips_enabled":                                  "0\n",
	}
	executables = []string{
		"/etc/eks/image-credential-provider/ecr-credential-provider",
		"/usr/bin/kubelet", "/usr/bin/containerd", "/usr/bin/aws", "/usr/sbin/runc",
	}
	return files, executables
}

// Dirs are the image's folders that hold no file: containerd's configuration
// folder, and nodeadm's NodeConfig drop-in folder, /etc/eks/nodeadm.d, which the
// image ships empty.
func (AL2023) Dirs() []string {
	return []string{"/etc/containerd", "/etc/eks/nodeadm.d", "/etc/kubernetes/manifests", "/var/lib/kubelet", "/opt/cni/bin"}
}

// Write lays the image out under root.
func (a AL2023) Write(root string) error {
	files, executables := a.Files()
	for p, content := range files {
		if err := write(root, p, content, 0o644); err != nil {
			return err
		}
	}
	for _, p := range executables {
		if err := write(root, p, "", 0o755); err != nil {
			return err
		}
	}
	for _, d := range a.Dirs() {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// AL2 is the Amazon Linux 2 EKS image, as far as eksboot reads it: the files
// bootstrap.sh edited in place rather than replaced. A user data script that edits
// one before bootstrap.sh (jq on kubelet-config.json) edits these.
type AL2 struct{}

// Files returns the image's files as node path -> content: the AMI's
// kubelet-config.json template (assets.KubeletConfig,
// templates/al2/runtime/kubelet-config.json), which bootstrap.sh's jq edits, and its
// kubeconfig template (kubeletconf.KubeconfigTemplate,
// templates/al2/runtime/kubelet-kubeconfig), whose placeholders bootstrap.sh's sed
// fills in.
func (AL2) Files() map[string]string {
	return map[string]string{
		"/etc/kubernetes/kubelet/kubelet-config.json": string(assets.KubeletConfig),
		"/var/lib/kubelet/kubeconfig":                 string(kubeletconf.KubeconfigTemplate()),
	}
}

// FS returns the image's files in memory.
func (a AL2) FS() Files {
	m := map[string]memFile{}
	for p, content := range a.Files() {
		m[strings.TrimPrefix(p, "/")] = memFile{data: []byte(content), mode: 0o644}
	}
	return newFiles(m, nil)
}

func write(root, p, content string, mode os.FileMode) error {
	hp := filepath.Join(root, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(hp), 0o755); err != nil {
		return err
	}
	return os.WriteFile(hp, []byte(content), mode)
}

// Files are an image's files in memory, read by node path ("/etc/os-release"): the
// node files of a simulated instance that is never written (`eksboot render`). A
// missing file is an error satisfying errors.Is(err, fs.ErrNotExist). Directories
// are implied by the files' paths, as in testing/fstest's MapFS, whose answers these
// are (imagefixture_test.go compares them); MapFS itself would bring the testing
// packages into eksboot's binary.
type Files struct {
	files map[string]memFile  // by name: the path without its leading "/"
	dirs  map[string][]string // by name ("." the root): the entries' names, sorted
}

type memFile struct {
	data []byte
	mode fs.FileMode
}

// FS returns the image's files in memory.
func (a AL2023) FS() Files {
	files, executables := a.Files()
	m := map[string]memFile{}
	for p, content := range files {
		m[strings.TrimPrefix(p, "/")] = memFile{data: []byte(content), mode: 0o644}
	}
	for _, p := range executables {
		m[strings.TrimPrefix(p, "/")] = memFile{mode: 0o755}
	}
	return newFiles(m, a.Dirs())
}

// File is a file in memory: its content and mode.
type File struct {
	Data []byte
	Mode fs.FileMode
}

// FromMap returns files in memory: files by node path, and folders (by node path)
// that may hold none.
func FromMap(files map[string]File, dirs []string) Files {
	m := make(map[string]memFile, len(files))
	for p, f := range files {
		m[name(p)] = memFile{data: f.Data, mode: f.Mode.Perm()}
	}
	return newFiles(m, dirs)
}

// Map returns the files by node path ("/etc/os-release"), and the folders that hold
// no file.
func (f Files) Map() (map[string]File, []string) {
	out := make(map[string]File, len(f.files))
	for n, m := range f.files {
		out["/"+n] = File{Data: bytes.Clone(m.data), Mode: m.mode}
	}
	var empty []string
	for d, entries := range f.dirs {
		if len(entries) == 0 && d != "." {
			empty = append(empty, "/"+d)
		}
	}
	sort.Strings(empty)
	return out, empty
}

// newFiles indexes files' directories and the folders dirs (node paths).
func newFiles(files map[string]memFile, dirs []string) Files {
	f := Files{files: files, dirs: map[string][]string{".": nil}}
	seen := map[string]bool{}
	names := make([]string, 0, len(files)+len(dirs))
	for n := range files {
		names = append(names, n)
	}
	for _, d := range dirs {
		if n := name(d); n != "." {
			if _, ok := f.dirs[n]; !ok {
				f.dirs[n] = nil
			}
			names = append(names, n)
		}
	}
	for _, n := range names {
		for child := n; child != "."; child = path.Dir(child) {
			if seen[child] {
				break
			}
			seen[child] = true
			f.dirs[path.Dir(child)] = append(f.dirs[path.Dir(child)], path.Base(child))
		}
	}
	for d := range f.dirs {
		sort.Strings(f.dirs[d])
	}
	return f
}

// name turns a node path into the name of the node file.
func name(p string) string {
	if p == "/" {
		return "."
	}
	return strings.TrimPrefix(path.Clean(p), "/")
}

func notExist(n string) error { return &fs.PathError{Op: "open", Path: n, Err: fs.ErrNotExist} }

// ReadFile reads the node file p.
func (f Files) ReadFile(p string) ([]byte, error) {
	n := name(p)
	if m, ok := f.files[n]; ok {
		return append([]byte(nil), m.data...), nil
	}
	if _, ok := f.dirs[n]; ok {
		return nil, &fs.PathError{Op: "read", Path: n, Err: fs.ErrInvalid}
	}
	return nil, notExist(n)
}

// Stat returns the file info of the node file p.
func (f Files) Stat(p string) (fs.FileInfo, error) {
	n := name(p)
	if m, ok := f.files[n]; ok {
		return memInfo{name: path.Base(n), size: int64(len(m.data)), mode: m.mode}, nil
	}
	if _, ok := f.dirs[n]; ok {
		return memInfo{name: path.Base(n), mode: fs.ModeDir | 0o555}, nil
	}
	return nil, notExist(n)
}

// ReadDir returns the names of the node directory p's entries, sorted.
func (f Files) ReadDir(p string) ([]string, error) {
	n := name(p)
	if entries, ok := f.dirs[n]; ok {
		return append([]string{}, entries...), nil
	}
	if _, ok := f.files[n]; ok {
		return nil, &fs.PathError{Op: "readdir", Path: n, Err: errors.New("not implemented")}
	}
	return nil, notExist(n)
}

// memInfo is a memory file's fs.FileInfo.
type memInfo struct {
	name string
	size int64
	mode fs.FileMode
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return i.mode }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return i.mode.IsDir() }
func (i memInfo) Sys() any           { return nil }
