package containerdconf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/eksboot/eksboot/assets"
	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
)

// ContainerdInput is what Containerd needs to write containerd's config.toml. The
// caller reads every file; Containerd touches no disk.
type ContainerdInput struct {
	// Major is the image's containerd major version: 1 (containerd 1.7) gets the
	// config version 2 template, 2 or later gets version 3, unless the overlays say
	// version 2 (see Containerd). Anything below 1 is an error.
	Major int
	// Minor is the image's containerd minor version, or -1 when only the major is
	// known (the profile's default). It picks the key of the CNI plugins' folders in
	// a version 3 file: containerd 2.0 reads cni.bin_dir only; 2.1 added the list
	// bin_dirs and deprecated bin_dir (a warning at every start, and 2.4 no longer
	// reads it). So 2.0 gets bin_dir and 2.1 on, or an unknown minor, bin_dirs (a
	// 2.0 ignores the key it does not know and uses its default, /opt/cni/bin).
	Minor int
	// Template is the --containerd-config-file or AMI template's contents; nil means
	// the embedded template for Major.
	Template []byte
	// TemplateName names Template in errors: its node path, or "embedded" ("" reads
	// as "embedded").
	TemplateName string
	// SandboxImage replaces every SANDBOX_IMAGE in the template (text substitution, as
	// bootstrap.sh's sed did): sandbox_image in version 2, pinned_images.sandbox in 3.
	SandboxImage string
	// RuncBinary, when set, becomes the runc runtime's options.BinaryName. "" leaves
	// the template's value: none in the embedded templates, so containerd runs the
	// runc of its PATH. AL2023's is /usr/sbin/runc, which nodeadm writes out.
	RuncBinary string
	// BaseRuntimeSpec, when set, is the node path of the base OCI runtime spec (see
	// BaseRuntimeSpec) given to the runc runtime, and to the nvidia runtime when there
	// is one. "" writes none: containerd refuses to start when the file is missing, so
	// only a caller that writes the file sets the path.
	BaseRuntimeSpec string
	// NvidiaRuntime is the path of nvidia-container-runtime when the image has it,
	// else "". When set, an "nvidia" runtime (runc shim, that binary, systemd cgroups)
	// is added and made the default, as nodeadm does; runc stays configured.
	NvidiaRuntime string
	// Overlays are partial containerd configurations merged onto the template in
	// order (NodeConfig's spec.containerd.config of each part). An empty TOML is
	// skipped.
	Overlays []ContainerdOverlay
	// SOCI makes the SOCI snapshotter the CRI plugin's snapshotter, as a proxy
	// plugin (FastImagePullOverlay for the template's version, merged before
	// Overlays, so the user's settings win).
	SOCI bool
}

// ContainerdOverlay is a partial containerd configuration in TOML and the name errors
// give it (spec.containerd.config, or a file path).
type ContainerdOverlay struct {
	Name, TOML string
}

// The CRI plugin tables of each config version that Containerd writes into.
const (
	criV2Plugin      = "io.containerd.grpc.v1.cri"    // version 2: the whole CRI plugin
	criV3Runtime     = "io.containerd.cri.v1.runtime" // version 3: runtimes, CNI, CDI
	runcShim         = "io.containerd.runc.v2"
	nvidiaRuntime    = "nvidia"
	embeddedTemplate = "embedded"
)

// Containerd returns containerd's config.toml.
//
// The template is Template or the embedded one: assets.ContainerdConfig (version 2)
// for containerd 1, assets.ContainerdConfigV3 for containerd 2, except that a
// containerd 2 node whose overlays say `version = 2` gets the version 2 template, as
// nodeadm does (containerd 2 migrates a version 2 file when it starts). SANDBOX_IMAGE
// is replaced with SandboxImage; then RuncBinary, BaseRuntimeSpec and NvidiaRuntime
// are set in the tables of the template's version (they win over the template);
// then the overlays are merged in order, tables key by key, later values winning
// (MergeContainerdConfig's rule), so settings of two NodeConfig parts are both kept.
//
// When there is nothing to set or merge, the output is the substituted template byte
// for byte (what ContainerdConfig returns); otherwise it is the merged tree encoded
// by go-toml with sorted keys, like MergeContainerdConfig's.
//
// Errors, every one found, each name their source: a template or overlay that is
// not TOML (never copied through), an overlay whose version differs from the
// template's, a version 3 template on containerd 1, a template that is neither
// version 2 nor 3 on containerd 2, or settings to make in a template whose version
// has no known CRI tables.
func Containerd(in ContainerdInput) ([]byte, error) {
	if in.Major < 1 {
		return nil, fmt.Errorf("containerd major version %d: want 1 or more", in.Major)
	}
	overlays, overlayVersion, errs := decodeOverlays(in.Overlays)

	name, template := in.TemplateName, string(in.Template)
	if in.Template == nil {
		name, template = embeddedTemplate, assets.ContainerdConfig
		if in.Major >= 2 && fmt.Sprint(overlayVersion) != "2" {
			template = assets.ContainerdConfigV3
		}
	}
	if name == "" {
		name = embeddedTemplate
	}
	if _, err := decodeTOML(template); err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("containerd config template %s: %w", name, err))...)
	}
	var tree map[string]any
	text := strings.ReplaceAll(template, assets.SandboxImagePlaceholder, in.SandboxImage)
	tree = nil
	if err := toml.Unmarshal([]byte(text), &tree); err != nil {
		return nil, errors.Join(append(errs, fmt.Errorf("containerd config template %s: sandbox image %q makes it invalid TOML: %w", name, in.SandboxImage, err))...)
	}

	version := fmt.Sprint(tree["version"])
	switch {
	case in.Major == 1 && version == "3":
		errs = append(errs, fmt.Errorf("containerd config template %s: version 3 needs containerd 2.x, the image has containerd 1", name))
	case in.Major >= 2 && version != "2" && version != "3":
		errs = append(errs, fmt.Errorf("containerd config template %s: version %s: containerd 2.x loads versions 2 and 3", name, versionText(tree["version"])))
	}
	for _, o := range overlays {
		if v, ok := o.tree["version"]; ok && fmt.Sprint(v) != version {
			errs = append(errs, fmt.Errorf("%s: version %v does not match the node's containerd config version %s (template %s)", o.name, v, versionText(tree["version"]), name))
		}
	}
	if in.SOCI {
		m, err := sociOverlay(version)
		if err != nil {
			errs = append(errs, fmt.Errorf("containerd config template %s: %w", name, err))
		}
		overlays = append([]namedTree{{"spec.featureGates.FastImagePull", m}}, overlays...)
	}
	changed, err := setNodeRuntimes(tree, version, in)
	if err != nil {
		errs = append(errs, fmt.Errorf("containerd config template %s: %w", name, err))
	}
	if version == "3" {
		moved, cniErrs := cniBinDirKeys(namedTree{"containerd config template " + name, tree}, overlays, in.takesCNIBinDirs())
		errs = append(errs, cniErrs...)
		changed = changed || moved
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if !changed && len(overlays) == 0 {
		return []byte(text), nil
	}
	for _, o := range overlays {
		mergeTables(tree, o.tree)
	}
	var out bytes.Buffer
	enc := toml.NewEncoder(&out)
	enc.SetIndentTables(false)
	if err := enc.Encode(tree); err != nil {
		return nil, fmt.Errorf("encode the containerd config: %w", err)
	}
	return out.Bytes(), nil
}

// CheckContainerdOverlay checks a partial containerd configuration (name:
// spec.containerd.config) as Containerd will read it, before any fact is gathered:
// TOML no deeper than MaxDepth (checked before it is decoded), and no control
// character in any key or string. Its version is checked against the template's
// by Containerd.
func CheckContainerdOverlay(name, doc string) error {
	m, err := decodeTOML(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if problems := inputcheck.CheckTreeText(m, name); len(problems) > 0 {
		return errors.New(quote.List(problems))
	}
	return nil
}

// decodeTOML decodes doc after checking its depth (CheckTOMLDepth): the decoder
// allocates a table for each dotted segment of a key before any later check could
// run. The decoded tree's depth is checked again, in case the scan and the decoder
// ever disagree on where a level starts.
func decodeTOML(doc string) (map[string]any, error) {
	if err := inputcheck.CheckTOMLDepth(doc); err != nil {
		return nil, err
	}
	var m map[string]any
	if err := toml.Unmarshal([]byte(doc), &m); err != nil {
		return nil, fmt.Errorf("not valid TOML: %w", err)
	}
	if d := inputcheck.TreeDepth(m); d > inputcheck.MaxDepth {
		return nil, fmt.Errorf("nested more than %d levels deep", inputcheck.MaxDepth)
	}
	return m, nil
}

// sociOverlay is FastImagePullOverlay of the config version, decoded.
func sociOverlay(version string) (map[string]any, error) {
	var ov ContainerdOverlay
	var err error
	switch version {
	case "2":
		ov, err = FastImagePullOverlay(2)
	case "3":
		ov, err = FastImagePullOverlay(3)
	default:
		return nil, errors.New("the SOCI snapshotter is set in config versions 2 and 3 only")
	}
	var m map[string]any
	if err == nil {
		err = toml.Unmarshal([]byte(ov.TOML), &m)
	}
	return m, err
}

// takesCNIBinDirs reports whether the image's containerd reads the CNI plugins'
// folders from cni.bin_dirs (2.1 and later, or a containerd 2 of unknown minor)
// rather than cni.bin_dir (2.0).
func (in ContainerdInput) takesCNIBinDirs() bool {
	return in.Major > 2 || (in.Major == 2 && (in.Minor < 0 || in.Minor >= 1))
}

// namedTree is a parsed TOML document and the name errors give it.
type namedTree struct {
	name string
	tree map[string]any
}

// cniBinDirKeys applies cniBinDirKey to the template and each overlay, and reports
// whether it moved a key of the template.
func cniBinDirKeys(template namedTree, overlays []namedTree, binDirs bool) (bool, []error) {
	var errs []error
	moved, err := cniBinDirKey(template.tree, binDirs)
	if err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", template.name, err))
	}
	for _, o := range overlays {
		if _, err := cniBinDirKey(o.tree, binDirs); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.name, err))
		}
	}
	return moved, errs
}

// cniBinDirKey writes the CNI plugins' folders of a version 3 tree (the CRI
// runtime's cni table) under the key the image's containerd reads: with binDirs, a
// bin_dir becomes the one-element list bin_dirs; without, a one-element bin_dirs
// becomes bin_dir. It reports whether it moved a key. Both keys at once is an error
// (containerd refuses the file), as is a bin_dirs of other than one folder for a
// containerd that reads only bin_dir, or a value of the wrong type.
func cniBinDirKey(tree map[string]any, binDirs bool) (bool, error) {
	plugins, _ := tree["plugins"].(map[string]any)
	rt, _ := plugins[criV3Runtime].(map[string]any)
	cni, _ := rt["cni"].(map[string]any)
	dir, hasDir := cni["bin_dir"]
	dirs, hasDirs := cni["bin_dirs"]
	switch {
	case hasDir && hasDirs:
		return false, fmt.Errorf("plugins.%q.cni: bin_dir and bin_dirs are both set; containerd refuses that (set bin_dirs)", criV3Runtime)
	case binDirs && hasDir:
		s, ok := dir.(string)
		if !ok {
			return false, fmt.Errorf("plugins.%q.cni.bin_dir: want a string (a folder)", criV3Runtime)
		}
		delete(cni, "bin_dir")
		cni["bin_dirs"] = []any{s}
		return true, nil
	case !binDirs && hasDirs:
		list, ok := dirs.([]any)
		if !ok || len(list) != 1 {
			return false, fmt.Errorf("plugins.%q.cni.bin_dirs: this containerd (2.0) reads one folder, from bin_dir; want a list of one folder", criV3Runtime)
		}
		s, ok := list[0].(string)
		if !ok {
			return false, fmt.Errorf("plugins.%q.cni.bin_dirs: want a list of one folder (a string)", criV3Runtime)
		}
		delete(cni, "bin_dirs")
		cni["bin_dir"] = s
		return true, nil
	}
	return false, nil
}

// setNodeRuntimes sets in's runc binary, base runtime spec and NVIDIA runtime in
// tree's CRI tables of the given config version, and reports whether it set
// anything.
func setNodeRuntimes(tree map[string]any, version string, in ContainerdInput) (bool, error) {
	if in.RuncBinary == "" && in.BaseRuntimeSpec == "" && in.NvidiaRuntime == "" {
		return false, nil
	}
	var ctrd map[string]any // the table holding default_runtime_name and runtimes
	switch version {
	case "2":
		ctrd = subTable(tree, "plugins", criV2Plugin, "containerd")
	case "3":
		ctrd = subTable(tree, "plugins", criV3Runtime, "containerd")
	default:
		return false, fmt.Errorf("version %s: eksboot sets the runc binary, base runtime spec and NVIDIA runtime only in versions 2 and 3", versionText(tree["version"]))
	}
	if ctrd == nil {
		return false, errors.New("its plugins' CRI tables are not tables")
	}
	runc := subTable(ctrd, "runtimes", "runc")
	if runc == nil {
		return false, errors.New("its runc runtime is not a table")
	}
	if _, ok := runc["runtime_type"]; !ok {
		runc["runtime_type"] = runcShim
	}
	if in.RuncBinary != "" {
		opts := subTable(runc, "options")
		if opts == nil {
			return false, errors.New("its runc runtime's options are not a table")
		}
		opts["BinaryName"] = in.RuncBinary
	}
	if in.BaseRuntimeSpec != "" {
		runc["base_runtime_spec"] = in.BaseRuntimeSpec
	}
	if in.NvidiaRuntime != "" {
		nvidia := map[string]any{
			"runtime_type": runcShim,
			"options":      map[string]any{"BinaryName": in.NvidiaRuntime, "SystemdCgroup": true},
		}
		if in.BaseRuntimeSpec != "" {
			nvidia["base_runtime_spec"] = in.BaseRuntimeSpec
		}
		ctrd["runtimes"].(map[string]any)[nvidiaRuntime] = nvidia
		ctrd["default_runtime_name"] = nvidiaRuntime
	}
	return true, nil
}

// subTable returns the table at path under t, creating missing tables, or nil when
// a value on the way is not a table.
func subTable(t map[string]any, path ...string) map[string]any {
	for _, k := range path {
		v, ok := t[k]
		if !ok {
			n := map[string]any{}
			t[k] = n
			t = n
			continue
		}
		if t, ok = v.(map[string]any); !ok {
			return nil
		}
	}
	return t
}

// versionText is a config's version for messages: "(none)" when it has none.
func versionText(v any) string {
	if v == nil {
		return "(none)"
	}
	return fmt.Sprint(v)
}

// decodeOverlays decodes the non-empty overlays, in order, with the first version
// one of them declares.
func decodeOverlays(in []ContainerdOverlay) ([]namedTree, any, []error) {
	var errs []error
	overlays := make([]namedTree, 0, len(in))
	overlayVersion := any(nil)
	for _, o := range in {
		if o.TOML == "" {
			continue
		}
		m, err := decodeTOML(o.TOML)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", o.Name, err))
			continue
		}
		if v, ok := m["version"]; ok && overlayVersion == nil {
			overlayVersion = v
		}
		overlays = append(overlays, namedTree{o.Name, m})
	}
	return overlays, overlayVersion, errs
}
