// Package nodefile is the one type the renderers share: a file eksboot owns on the
// node, together with what reads it. Each renderer (kubeletconf for the kubelet,
// containerdconf for containerd, nodesys for the node's system services) returns
// its files as Files, naming the systemd units each one affects, so that bootstrap's
// Actions learns from the files which units to restart, not from a table of paths.
// It is a leaf: it imports nothing of eksboot's.
package nodefile

import "io/fs"

// File is one file a renderer owns: its content, or that it must not exist, and the
// systemd units that read it.
type File struct {
	// Path is the node path (written under --root).
	Path string
	// Data is the content; nil when Remove is set.
	Data []byte
	// Mode is the file's permission bits.
	Mode fs.FileMode
	// Secret marks content that must never be printed (diffs show a digest instead).
	Secret bool
	// Remove says the file must not exist: a stale one is removed.
	Remove bool
	// Units are the systemd units that read the file, so that a change to it (a
	// write or a removal) restarts them, or starts or signals them, as bootstrap's
	// Actions does for each unit. Empty only for a file that no unit reads again
	// after it started (/etc/hosts, read at each lookup; eksboot's own cache).
	Units []string
	// Reload says systemd itself reads the file (a unit, a drop-in, the manager's
	// configuration): a change needs a daemon-reload before the units restart.
	Reload bool
	// From names the input the content is made of (a flag or a NodeConfig field),
	// for the error when the file would be too large to read back.
	From string
}

// Mode of the files eksboot writes unless a renderer says otherwise: readable by
// every user, as bootstrap.sh left them.
const Mode fs.FileMode = 0o644
