// Package genfile writes the Go files that eksboot's generators produce, or checks
// that the committed ones are what the generators would write now. It holds the rule
// the three generators (maxpods/internal/gen, kubeletconf/internal/typegen,
// kubeletconf/internal/templategen) and their freshness tests share, so that a stale
// file is reported the same way everywhere.
package genfile

import (
	"bytes"
	"fmt"
	"os"
)

// WriteOrCheck writes src to path or, with check, writes nothing and returns an error
// when path does not hold exactly src; the error names the file, why it is stale
// (because) and the command that refreshes it.
func WriteOrCheck(path string, src []byte, check bool, because, refresh string) error {
	if !check {
		return os.WriteFile(path, src, 0o644)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(old, src) {
		return fmt.Errorf("%s is stale: %s; run `%s` and commit it", path, because, refresh)
	}
	return nil
}
