package assets

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"sync"
)

// bootstrapShimGz is bootstrap.sh, gzipped (shim_test.go checks it is the same file;
// `go test ./assets -run TestShimGz -update` rewrites it). It is stored compressed so
// that the binary never holds the shim's text: eksctl's maxPodsPerNode hook runs
// sed -i 's/KUBELET_EXTRA_ARGS=$2/.../' /etc/eks/bootstrap.sh, and on an image where
// that path is the eksboot binary itself (a symlink or a copy) a plain copy of the
// shim inside it would be matched and the binary rewritten.
//
//go:embed bootstrap.sh.gz
var bootstrapShimGz []byte

// BootstrapShim returns /etc/eks/bootstrap.sh of an eksboot node image (installed by
// packer/install.sh); render runs it, as edited by the user data, on its simulated
// node.
var BootstrapShim = sync.OnceValue(func() []byte {
	r, err := gzip.NewReader(bytes.NewReader(bootstrapShimGz))
	if err != nil {
		panic("assets: bootstrap.sh.gz: " + err.Error()) // checked by shim_test.go
	}
	b, err := io.ReadAll(r)
	if err != nil {
		panic("assets: bootstrap.sh.gz: " + err.Error())
	}
	return b
})
