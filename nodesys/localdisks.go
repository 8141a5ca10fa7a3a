package nodesys

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode"

	"github.com/eksboot/eksboot/internal/quote"
)

// LocalDisksHelper is the node image's instance-store helper that LocalDisksArgs
// builds the arguments of (on PATH; /usr/bin/setup-local-disks on EKS images).
const LocalDisksHelper = "setup-local-disks"

// localDiskModes maps spec.instance.localStorage.strategy and the helper's own mode
// names (bootstrap.sh's --local-disks) to the helper's mode.
var localDiskModes = map[string]string{
	"RAID0": "raid0", "RAID10": "raid10", "Mount": "mount",
	"raid0": "raid0", "raid10": "raid10", "mount": "mount", "none": "none",
}

// disabledMountFlags maps spec.instance.localStorage.disabledMounts values to the
// helper's flags, as nodeadm passes them.
var disabledMountFlags = map[string]string{
	"Containerd": "--no-bind-containerd", // /var/lib/containerd
	"PodLogs":    "--no-bind-pods-logs",  // /var/log/pods
}

// LocalDisksArgs returns the arguments (after the program name, LocalDisksHelper)
// with which nodeadm runs the image's setup-local-disks helper for
// spec.instance.localStorage:
//
//	<mode> [--dir <mountPath>] [--no-bind-containerd] [--no-bind-pods-logs]
//
// mode is strategy in lower case (RAID0 raid0, RAID10 raid10, Mount mount; the
// helper's own names raid0, raid10, mount and none, bootstrap.sh's --local-disks,
// are taken as they are). --dir is given only when mountPath is set (the helper's
// default is /mnt/k8s-disks); the flags of disabledMounts follow in their order,
// each once. An empty strategy returns nil, nil: nodeadm runs nothing then, and
// ignores mountPath and disabledMounts.
//
// Errors, every one found: an unknown strategy; a mountPath that is not absolute
// and clean (one trailing '/' is allowed and dropped, as in the default
// "/mnt/k8s-disks/"), is "/", or has whitespace, a control character, '\' or '%'
// (the helper writes it into .mount units); a disabled mount other than Containerd
// and PodLogs. "SOCI" (/var/lib/soci-snapshotter-grpc), which newer nodeadm
// accepts, is rejected as not supported by eksboot yet: the image helper's flag for
// it is not known.
func LocalDisksArgs(strategy, mountPath string, disabled []string) ([]string, error) {
	if strategy == "" {
		return nil, nil
	}
	var errs []error
	mode, ok := localDiskModes[strategy]
	if !ok {
		errs = append(errs, fmt.Errorf("spec.instance.localStorage.strategy: %s, want RAID0, RAID10 or Mount", quote.Value(strategy)))
	}
	args := []string{mode}
	if mountPath != "" {
		dir, err := checkMountPath(mountPath)
		if err != nil {
			errs = append(errs, fmt.Errorf("spec.instance.localStorage.mountPath: %s: %w", quote.Value(mountPath), err))
		}
		args = append(args, "--dir", dir)
	}
	for i, d := range disabled {
		flag, ok := disabledMountFlags[d]
		switch {
		case d == "SOCI":
			errs = append(errs, fmt.Errorf("spec.instance.localStorage.disabledMounts[%d]: SOCI: not supported by eksboot yet (see docs/compat.md)", i))
		case !ok:
			errs = append(errs, fmt.Errorf("spec.instance.localStorage.disabledMounts[%d]: %s, want Containerd or PodLogs", i, quote.Value(d)))
		case !slices.Contains(args, flag):
			args = append(args, flag)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return args, nil
}

// checkMountPath returns p without a trailing '/' if it is a mount path the helper
// can use.
func checkMountPath(p string) (string, error) {
	if strings.ContainsFunc(p, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) || r == '\\' || r == '%' }) {
		return "", fmt.Errorf("whitespace, control characters, '\\' and '%%' are not allowed")
	}
	if !path.IsAbs(p) {
		return "", fmt.Errorf("want an absolute path")
	}
	dir := p
	if len(dir) > 1 {
		dir = strings.TrimSuffix(dir, "/")
	}
	if path.Clean(dir) != dir {
		return "", fmt.Errorf("want a clean path (no '//', '.' or '..'): %s", path.Clean(dir))
	}
	if dir == "/" {
		return "", fmt.Errorf("the root directory cannot be a mount path")
	}
	return dir, nil
}
