package bootstrap

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/kubeletconf"
	"github.com/eksboot/eksboot/nodefile"
)

// KubeconfigBasePath is eksboot's record of the node's own kubeconfig template,
// beside the kubeconfig: the template and the digests of the files eksboot filled
// in from it (docs/compat.md, "kubelet-config.json is edited in place").
const KubeconfigBasePath = kubeletconf.KubeconfigPath + ".base"

// KubeconfigBase is the node's own kubeconfig template, when it has one that is not
// the AMI's: bootstrap.sh's sed filled in the image's /var/lib/kubelet/kubeconfig in
// place, so what the user data before it changed there (the credential plugin's
// path or arguments) stayed. Such a template is the base the first time eksboot
// meets it; the files eksboot fills in from it are known by the record beside it
// (KubeconfigBasePath), whose template is then the base. A node with the AMI's
// template, none, or a kubeconfig of its own without placeholders gets eksboot's
// kubeconfig for its image (kubeletconf.Kubeconfig.Render).
type KubeconfigBase struct {
	// Template is the node's template (nil: none).
	Template []byte
	written  []string
}

// kubeconfigBaseRecord is KubeconfigBasePath's JSON.
type kubeconfigBaseRecord struct {
	Comment  string   `json:"comment"`
	Template string   `json:"template"`
	Written  []string `json:"written"`
}

const kubeconfigBaseComment = "eksboot: the kubelet's kubeconfig is this template with bootstrap.sh's placeholders filled in; a kubeconfig whose sha256 is not in written is read again"

// readKubeconfigBase finds the node's kubeconfig template: the node's file when it
// names a placeholder and is not the AMI's template, else the record's when the
// node's file is one eksboot filled in from it. A record that cannot be read is
// left aside with a warning; a template that is no kubeconfig is an error naming it.
func readKubeconfigBase(files NodeFiles, warn func(string)) (KubeconfigBase, error) {
	disk, err := optional(files.ReadFile(kubeletconf.KubeconfigPath))
	if err != nil {
		return KubeconfigBase{}, err
	}
	if disk != nil && kubeletconf.HasKubeconfigPlaceholder(disk) {
		if bytes.Equal(disk, kubeletconf.KubeconfigTemplate()) {
			return KubeconfigBase{}, nil
		}
		if err := kubeletconf.CheckKubeconfigTemplate(disk); err != nil {
			return KubeconfigBase{}, fmt.Errorf("%s (the node's template, which bootstrap.sh fills in in place): %w", kubeletconf.KubeconfigPath, err)
		}
		return KubeconfigBase{Template: disk}, nil
	}
	rec, err := readKubeconfigBaseRecord(files)
	if err != nil {
		warn(fmt.Sprintf("%s: %v: writing the kubeconfig of the image", KubeconfigBasePath, err))
		return KubeconfigBase{}, nil
	}
	if rec == nil || disk == nil || !slices.Contains(rec.Written, digest(disk)) {
		return KubeconfigBase{}, nil
	}
	if err := kubeletconf.CheckKubeconfigTemplate([]byte(rec.Template)); err != nil {
		return KubeconfigBase{}, fmt.Errorf("%s: template: %w", KubeconfigBasePath, err)
	}
	return KubeconfigBase{Template: []byte(rec.Template), written: rec.Written}, nil
}

func readKubeconfigBaseRecord(files NodeFiles) (*kubeconfigBaseRecord, error) {
	b, err := optional(files.ReadFile(KubeconfigBasePath))
	if err != nil || b == nil {
		return nil, err
	}
	if err := inputcheck.CheckJSONDepth(b); err != nil {
		return nil, err
	}
	var rec kubeconfigBaseRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// record is KubeconfigBasePath for the kubeconfig filled in from b's template
// (made), or its removal when there is no template.
func (b KubeconfigBase) record(made []byte) (nodefile.File, error) {
	if b.Template == nil {
		return nodefile.File{Path: KubeconfigBasePath, Remove: true}, nil
	}
	rec := kubeconfigBaseRecord{Comment: kubeconfigBaseComment, Template: string(b.Template), Written: []string{digest(made)}}
	for _, d := range b.written {
		if len(rec.Written) < kubeletBaseKeep && !slices.Contains(rec.Written, d) {
			rec.Written = append(rec.Written, d)
		}
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return nodefile.File{}, err
	}
	return nodefile.File{Path: KubeconfigBasePath, Data: append(data, '\n'), Mode: nodefile.Mode, From: kubeletconf.KubeconfigPath}, nil
}
