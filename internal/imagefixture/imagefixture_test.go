package imagefixture

import (
	"fmt"
	"io/fs"
	"path"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/kubeletconf"
)

// mapFS is the image as testing/fstest's MapFS, which Files answers like.
func mapFS(a AL2023) fstest.MapFS {
	files, executables := a.Files()
	m := fstest.MapFS{}
	for p, content := range files {
		m[strings.TrimPrefix(p, "/")] = &fstest.MapFile{Data: []byte(content), Mode: 0o644}
	}
	for _, p := range executables {
		m[strings.TrimPrefix(p, "/")] = &fstest.MapFile{Mode: 0o755}
	}
	for _, d := range a.Dirs() {
		if _, ok := m[strings.TrimPrefix(d, "/")]; !ok {
			m[strings.TrimPrefix(d, "/")] = &fstest.MapFile{Mode: fs.ModeDir | 0o555}
		}
	}
	return m
}

// describe is what a FileInfo says, or the error.
func describe(fi fs.FileInfo, err error) string {
	if err != nil {
		return "error " + err.Error()
	}
	return fmt.Sprintf("%s %d %v %v %v %v", fi.Name(), fi.Size(), fi.Mode(), fi.ModTime(), fi.IsDir(), fi.Sys())
}

// TestFilesAnswerAsMapFS: every file, every directory, the root and missing paths
// read, stat and list as in fstest.MapFS, errors included.
func TestFilesAnswerAsMapFS(t *testing.T) {
	a := AL2023{KubeletVersion: "v1.35.1"}
	for _, tc := range []struct {
		name string
		got  Files
		want fstest.MapFS
	}{
		{"al2023", a.FS(), mapFS(a)},
		{"al2023 through Map and FromMap", FromMap(a.FS().Map()), mapFS(a)},
		{"al2", AL2{}.FS(), fstest.MapFS{
			"etc/kubernetes/kubelet/kubelet-config.json": &fstest.MapFile{Data: assets.KubeletConfig, Mode: 0o644},
			"var/lib/kubelet/kubeconfig":                 &fstest.MapFile{Data: kubeletconf.KubeconfigTemplate(), Mode: 0o644},
		}},
		{"empty", FromMap(nil, nil), fstest.MapFS{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			paths := []string{"/", "/etc", "/etc/", "/nope", "/etc/nope", "/etc/os-release/x", "//etc/./os-release"}
			for n := range tc.want {
				for p := "/" + n; p != "/"; p = path.Dir(p) {
					paths = append(paths, p)
				}
			}
			for _, p := range paths {
				gb, gerr := tc.got.ReadFile(p)
				wb, werr := tc.want.ReadFile(name(p))
				if fmt.Sprint(gerr) != fmt.Sprint(werr) || string(gb) != string(wb) {
					t.Errorf("ReadFile(%q) = %q, %v; MapFS %q, %v", p, gb, gerr, wb, werr)
				}
				if g, w := describe(tc.got.Stat(p)), describe(tc.want.Stat(name(p))); g != w {
					t.Errorf("Stat(%q) = %s; MapFS %s", p, g, w)
				}
				gd, gerr := tc.got.ReadDir(p)
				entries, werr := tc.want.ReadDir(name(p))
				var wd []string
				if werr == nil {
					wd = []string{}
					for _, e := range entries {
						wd = append(wd, e.Name())
					}
				}
				if fmt.Sprint(gerr) != fmt.Sprint(werr) || !reflect.DeepEqual(gd, wd) {
					t.Errorf("ReadDir(%q) = %q, %v; MapFS %q, %v", p, gd, gerr, wd, werr)
				}
			}
		})
	}
}
