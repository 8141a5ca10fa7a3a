// Package unitenv is the grammar of an environment variable in a systemd unit file
// (Environment= and DefaultEnvironment=): which names systemd accepts and which
// values it carries unchanged. The kubelet's drop-ins (kubeletconf) and
// spec.instance.environment's files (nodesys) both check their variables with it,
// so the two renderers refuse the same things. It is pure.
package unitenv

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/eksboot/eksboot/internal/quote"
)

// CheckName checks name as systemd's env_name_is_valid does: a letter or '_', then
// letters, digits or '_'.
func CheckName(name string) error {
	if name == "" {
		return fmt.Errorf("environment variable name is empty")
	}
	for i, r := range name {
		if r != '_' && !isASCIILetter(r) && (i == 0 || !isASCIIDigit(r)) {
			return fmt.Errorf("environment variable name %s is invalid: it must be a letter or '_' followed by letters, digits or '_'", quote.Value(name))
		}
	}
	return nil
}

// CheckValue rejects what systemd cannot carry in an Environment= value: bytes that
// are not UTF-8, and control characters other than tab (how systemd treats them
// differs between its versions).
func CheckValue(value string) error {
	if !utf8.ValidString(value) {
		return fmt.Errorf("value is not valid UTF-8")
	}
	for i, r := range value {
		if r != '\t' && unicode.IsControl(r) {
			return fmt.Errorf("value has control character %U at byte %d; newlines, NUL and control characters other than tab are not allowed", r, i)
		}
	}
	return nil
}

func isASCIILetter(r rune) bool { return ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') }

func isASCIIDigit(r rune) bool { return '0' <= r && r <= '9' }
