package containerdconf

import (
	"strings"

	"github.com/eksboot/eksboot/assets"
)

// ContainerdConfig is bootstrap.sh's containerd config.toml, which the tests compare
// Containerd's with: template (assets.ContainerdConfig, or the file given with
// --containerd-config-file) with every occurrence of
// assets.SandboxImagePlaceholder ("SANDBOX_IMAGE") replaced by sandboxImage, the
// pause image reference. Like bootstrap.sh's sed, it is plain text substitution:
// the template is not parsed and sandboxImage is not quoted or checked. Containerd
// makes the same substitution and also checks that the template and the result are
// TOML: prefer it.
func ContainerdConfig(template, sandboxImage string) []byte {
	return []byte(strings.ReplaceAll(template, assets.SandboxImagePlaceholder, sandboxImage))
}
