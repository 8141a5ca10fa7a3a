package sim

import (
	"strings"

	"github.com/eksboot/eksboot/userdata"
)

// isScript reports whether cloud-init runs p as a shell script part.
func isScript(p userdata.Part) bool {
	switch p.ContentType {
	case userdata.TypeShellScript:
		return true
	case userdata.TypePlain:
		return strings.HasPrefix(string(p.Body), "#!")
	}
	return false
}
