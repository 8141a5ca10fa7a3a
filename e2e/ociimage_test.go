//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"time"
)

// Local images of the box: the sandbox image as AL2023's image build caches it
// (cache-pause-container: pulled at build time, tagged, exported to
// /etc/eks/pause.tar) and the test pod's image. Both are the e2e/pause program;
// containerd imports them and nothing pulls.
const (
	al2023Pause = "localhost/kubernetes/pause:latest"
	podImage    = "localhost/eksboot-e2e/pod:latest"
)

// ociArchive returns an OCI image layout as a tar archive (what `ctr images
// import` reads): one image for this machine's platform whose only layer holds the
// program at /<name>, its entry point, indexed once under each of names
// (io.containerd.image.name, the full reference ctr names the image by).
func ociArchive(program []byte, name string, names ...string) ([]byte, error) {
	var layer bytes.Buffer
	lt := tar.NewWriter(&layer)
	epoch := time.Unix(0, 0)
	if err := lt.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(program)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
		return nil, err
	}
	if _, err := lt.Write(program); err != nil {
		return nil, err
	}
	if err := lt.Close(); err != nil {
		return nil, err
	}
	type descriptor struct {
		MediaType   string            `json:"mediaType"`
		Digest      string            `json:"digest"`
		Size        int               `json:"size"`
		Platform    map[string]string `json:"platform,omitempty"`
		Annotations map[string]string `json:"annotations,omitempty"`
	}
	blobs := map[string][]byte{}
	add := func(mediaType string, b []byte) descriptor {
		sum := sha256.Sum256(b)
		d := "sha256:" + hex.EncodeToString(sum[:])
		blobs[d] = b
		return descriptor{MediaType: mediaType, Digest: d, Size: len(b)}
	}
	layerDesc := add("application/vnd.oci.image.layer.v1.tar", layer.Bytes())
	config, err := json.Marshal(map[string]any{
		"architecture": runtime.GOARCH, "os": "linux",
		"config": map[string]any{"Entrypoint": []string{"/" + name}},
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{layerDesc.Digest}},
	})
	if err != nil {
		return nil, err
	}
	configDesc := add("application/vnd.oci.image.config.v1+json", config)
	manifest, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
		"config": configDesc, "layers": []descriptor{layerDesc},
	})
	if err != nil {
		return nil, err
	}
	manifestDesc := add("application/vnd.oci.image.manifest.v1+json", manifest)
	var manifests []descriptor
	for _, n := range names {
		d := manifestDesc
		d.Platform = map[string]string{"architecture": runtime.GOARCH, "os": "linux"}
		d.Annotations = map[string]string{"io.containerd.image.name": n}
		manifests = append(manifests, d)
	}
	index, err := json.Marshal(map[string]any{
		"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": manifests,
	})
	if err != nil {
		return nil, err
	}

	var out bytes.Buffer
	tw := tar.NewWriter(&out)
	file := func(p string, b []byte) error {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(b)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := tw.Write(b)
		return err
	}
	if err := file("oci-layout", []byte(`{"imageLayoutVersion":"1.0.0"}`)); err != nil {
		return nil, err
	}
	if err := file("index.json", index); err != nil {
		return nil, err
	}
	for _, d := range []descriptor{layerDesc, configDesc, manifestDesc} {
		if err := file("blobs/sha256/"+d.Digest[len("sha256:"):], blobs[d.Digest]); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeOCIArchive writes ociArchive's archive of the program at path, as /<name>,
// to out.
func writeOCIArchive(program, name, out string, names ...string) error {
	b, err := os.ReadFile(program)
	if err != nil {
		return err
	}
	a, err := ociArchive(b, name, names...)
	if err != nil {
		return fmt.Errorf("OCI archive: %w", err)
	}
	return os.WriteFile(out, a, 0o644)
}
