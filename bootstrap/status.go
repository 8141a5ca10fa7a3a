package bootstrap

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"go.uber.org/zap"

	"github.com/eksboot/eksboot/internal/scrub"
	"github.com/eksboot/eksboot/internal/strictjson"
	"github.com/eksboot/eksboot/rootfs"
)

// StatusDir and StatusPath are where a run records what it did (`eksboot doctor`
// reads it): when, from which inputs, which files, and how it ended.
const (
	StatusDir  = "/var/lib/eksboot"
	StatusPath = StatusDir + "/status.json"
)

// statusLimit bounds the status file when it is read back: the files kept whole
// (statusContent) are a few KiB.
const statusLimit = 256 << 10

// statusContent are the files whose bytes the status keeps, so that doctor can show
// the diff of a hand edit. They are the only ones eksboot writes that can never hold
// a secret of the user data: the containerd configuration may carry registry
// credentials, the environment drop-ins any variable, the CA is the CA. Every other
// file is kept as its digest only.
var statusContent = map[string]bool{
	"/etc/kubernetes/kubelet/kubelet-config.json": true,
	"/var/lib/kubelet/kubeconfig":                 true, // the exec plugin's name and arguments, no token
}

// Status is the record of the last run: the JSON of StatusPath.
type Status struct {
	// Version is eksboot's version of the run (cli.Version).
	Version string `json:"version,omitempty"`
	// Started and Finished bound the run.
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	// Outcome is "ok" or "failed"; Error is the failure's message (errors name
	// values but never the CA, a token or credentials: docs/compat.md).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Phase is "config" for init's config phase (files and daemon-reload only),
	// "run" otherwise.
	Phase string `json:"phase"`
	// KubeletStart is init's order and its reason (KubeletStart.String); empty
	// for bootstrap's run.
	KubeletStart string       `json:"kubeletStart,omitempty"`
	Inputs       StatusInputs `json:"inputs"`
	// Files are the files the node was computed to have (written now or already up
	// to date), in the plan's order; empty when the run failed before its plan.
	Files []StatusFile `json:"files,omitempty"`
	// Removed are the files the node must not have.
	Removed []string `json:"removed,omitempty"`
}

// StatusInputs are the run's inputs as names and digests: never the CA, the user
// data or a token themselves.
type StatusInputs struct {
	ClusterName       string `json:"clusterName,omitempty"`
	APIServerEndpoint string `json:"apiServerEndpoint,omitempty"`
	CASHA256          string `json:"caSHA256,omitempty"`
	UserDataSHA256    string `json:"userDataSHA256,omitempty"`
	InstanceID        string `json:"instanceID,omitempty"`
	InstanceType      string `json:"instanceType,omitempty"`
	Region            string `json:"region,omitempty"`
	NodeName          string `json:"nodeName,omitempty"`
	KubeletVersion    string `json:"kubeletVersion,omitempty"`
	ImageProfile      string `json:"imageProfile,omitempty"`
	MaxPods           int    `json:"maxPods,omitempty"`
	MaxPodsSource     string `json:"maxPodsSource,omitempty"`
}

// StatusFile is one file of the node as the run made it.
type StatusFile struct {
	Path   string      `json:"path"`
	SHA256 string      `json:"sha256"`
	Mode   fs.FileMode `json:"mode"`
	Bytes  int         `json:"bytes"`
	// Content is the file itself, only for statusContent's files.
	Content string `json:"content,omitempty"`
}

// StatusVersion is the version recorded in the status (cli sets it to its Version).
var StatusVersion = "dev"

// digest is the hex SHA-256 of b.
func digest(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// newStatus builds the record of a run of c that started at start and ended now
// with err; f and n are what the run got to (nil when it stopped before them). It is
// pure but for the clock.
func newStatus(c *Config, f *Facts, n *Node, start, end time.Time, err error) *Status {
	s := &Status{Version: StatusVersion, Started: start.UTC(), Finished: end.UTC(), Outcome: "ok", Phase: "run"}
	if err != nil {
		s.Outcome, s.Error = "failed", scrub.Process.Remove(err.Error()) // the last guard: the clients scrub what they quote
	}
	if c.ReloadOnly {
		s.Phase = "config"
	}
	s.KubeletStart = c.KubeletStart.String()
	in := &s.Inputs
	cl := c.givenCluster()
	if f != nil {
		cl = f.Cluster // discovered, when it was
	}
	in.ClusterName, in.APIServerEndpoint = c.ClusterName, cl.Endpoint
	if len(cl.CA) > 0 {
		in.CASHA256 = digest(cl.CA)
	}
	if f != nil {
		if f.Instance.UserData != nil {
			in.UserDataSHA256 = digest(f.Instance.UserData)
		}
		in.InstanceID, in.InstanceType, in.Region = f.Instance.InstanceID, f.Instance.InstanceType, f.Instance.Region
		in.NodeName, in.MaxPods, in.MaxPodsSource = f.PrivateDNSName, f.MaxPods, f.MaxPodsSource
		in.KubeletVersion, in.ImageProfile = f.KubeletVersion.String(), f.Profile.Name
	}
	if n != nil {
		in.MaxPods = n.MaxPods
		for _, file := range n.Files {
			sf := StatusFile{Path: file.Path, SHA256: digest(file.Data), Mode: file.Mode, Bytes: len(file.Data)}
			if statusContent[file.Path] && !file.Secret {
				sf.Content = string(file.Data)
			}
			s.Files = append(s.Files, sf)
		}
		s.Removed = n.Remove
	}
	return s
}

// WriteStatus writes s to StatusPath under root, atomically (rootfs). The directory
// is created on the node itself (root "/"); under any other root the status is
// written only when the root already has StatusDir, so the roots of tests and of
// render stay exactly as the run left them.
func WriteStatus(root *rootfs.Root, s *Status) error {
	if root.Dir() == "/" {
		if err := root.MkdirAll(StatusDir); err != nil {
			return err
		}
	} else if st, err := root.Stat(StatusDir); err != nil || !st.IsDir() {
		return nil
	}
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	return root.WriteFile(StatusPath, append(b, '\n'), 0o644)
}

// ErrNoStatus is ReadStatus's error when no run has recorded a status.
var ErrNoStatus = errors.New("no status recorded (" + StatusPath + ")")

// ReadStatus reads the status of the last run under files.
func ReadStatus(files interface {
	ReadFileLimit(p string, max int64) ([]byte, error)
},
) (*Status, error) {
	b, err := files.ReadFileLimit(StatusPath, statusLimit)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoStatus
	}
	if err != nil {
		return nil, err
	}
	var s Status
	if err := strictjson.Unmarshal(b, &s, strictjson.Limits{Bytes: statusLimit, Values: 100_000}); err != nil {
		return nil, fmt.Errorf("%s: %w", StatusPath, err)
	}
	return &s, nil
}

// recordStatus writes the status of a run that is ending (Run defers it). A dry run
// records nothing; a status that cannot be written is a warning, never the run's
// failure.
func recordStatus(env *Env, c *Config, f *Facts, n *Node, start time.Time, err error) {
	if c.DryRun || env.Root == nil {
		return
	}
	if env.Root.Dir() == "/" && env.Geteuid != nil && env.Geteuid() != 0 {
		return
	}
	if werr := WriteStatus(env.Root, newStatus(c, f, n, start, time.Now(), err)); werr != nil {
		env.Log.Warn("status not recorded", zap.String("path", StatusPath), zap.Error(werr))
	}
}
