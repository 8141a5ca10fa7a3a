package rootfs

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
)

// Diff returns a unified diff of the change, as `diff -u` would print it, for
// --dry-run. The content of a secret file is replaced by its size and digest.
func (c Change) Diff() string {
	from, to := "a"+c.Path, "b"+c.Path
	if c.Old == nil {
		from = "/dev/null"
	}
	if c.Remove {
		to = "/dev/null"
	}
	old, new := string(c.Old), string(c.New)
	if c.Secret {
		old, new = redact(c.Old), redact(c.New)
	}
	d := difflib.UnifiedDiff{
		A:        splitLines(old),
		B:        splitLines(new),
		FromFile: from,
		ToFile:   to,
		Context:  3,
	}
	text, err := difflib.GetUnifiedDiffString(d)
	if err != nil { // only a failing writer makes difflib fail; it writes to a buffer
		return fmt.Sprintf("--- %s\n+++ %s\n(diff unavailable: %v)\n", from, to, err)
	}
	if text == "" && c.Old != nil && !c.Remove {
		what := fmt.Sprintf("mode becomes %04o", c.Mode)
		if c.Chown {
			what = fmt.Sprintf("owner %d:%d becomes 0:0 (root:root), mode %04o", c.OldUID, c.OldGID, c.Mode)
		}
		text = fmt.Sprintf("--- %s\n+++ %s\n(content unchanged; %s)\n", from, to, what)
	}
	return text
}

func redact(b []byte) string {
	if b == nil {
		return ""
	}
	return fmt.Sprintf("(secret: %d bytes, sha256 %x)\n", len(b), sha256.Sum256(b))
}

// splitLines splits s into lines that keep their "\n", marking a last line that lacks one.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := strings.SplitAfter(s, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] += "\n\\ No newline at end of file\n"
	}
	return lines
}
