package kubeletconf

import (
	"errors"
	"fmt"
	"strconv"
)

// Version is a kubelet's major.minor.patch version. It is the one version type of
// eksboot: the command line, the image's version files and `kubelet --version` are
// parsed into it once, and the kubelet table (Kubelet) is keyed by its minor.
type Version struct{ Major, Minor, Patch int }

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// AtLeast reports whether v >= major.minor.
func (v Version) AtLeast(major, minor int) bool {
	return v.Major > major || (v.Major == major && v.Minor >= minor)
}

// IsZero reports whether v is the zero Version (no version known).
func (v Version) IsZero() bool { return v == Version{} }

// FindVersion finds the first x.y.z in s, as bootstrap.sh's grep does on
// `kubelet --version` output or a version file: "Kubernetes v1.32.9-eks-113cf36"
// gives 1.32.9, "containerd github.com/containerd/containerd/v2 2.1.5 fb4c..." gives
// 2.1.5 (the "v2" of the module path has no dots).
func FindVersion(s string) (Version, error) {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) || (i > 0 && isDigit(s[i-1])) {
			continue
		}
		var parts [3]int
		j, ok := i, true
		for k := range parts {
			start := j
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j == start || j-start > 9 {
				ok = false
				break
			}
			parts[k], _ = strconv.Atoi(s[start:j])
			if k < 2 {
				if j >= len(s) || s[j] != '.' {
					ok = false
					break
				}
				j++
			}
		}
		if ok {
			return Version{parts[0], parts[1], parts[2]}, nil
		}
	}
	return Version{}, errors.New("no x.y.z version found")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
