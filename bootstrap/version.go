package bootstrap

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"sync"
)

// kubeletVersionRE finds the version in `kubelet --version` output or a version file,
// as bootstrap.sh's grep does: "Kubernetes v1.32.9-eks-113cf36" gives 1.32.9.
var kubeletVersionRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([0-9]+)\.([0-9]+)\.([0-9]+)`) })

// version is a kubelet version's major, minor and patch numbers.
type version struct{ major, minor, patch int }

func (v version) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

// atLeast reports whether v >= major.minor.
func (v version) atLeast(major, minor int) bool {
	return v.major > major || (v.major == major && v.minor >= minor)
}

// parseKubeletVersion finds the first x.y.z in s.
func parseKubeletVersion(s string) (version, error) {
	m := kubeletVersionRE().FindStringSubmatch(s)
	if m == nil {
		return version{}, errors.New("no x.y.z version found")
	}
	var v version
	var err error
	for i, dst := range []*int{&v.major, &v.minor, &v.patch} {
		if *dst, err = strconv.Atoi(m[i+1]); err != nil {
			return version{}, fmt.Errorf("version %q: %w", m[0], err)
		}
	}
	return v, nil
}
