package cli

import (
	"io/fs"
	"os"
	"path/filepath"
)

// readTree reads every file under dir as node path -> content.
func readTree(dir string) (map[string][]byte, error) {
	tree := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		tree["/"+filepath.ToSlash(rel)] = b
		return nil
	})
	return tree, err
}
