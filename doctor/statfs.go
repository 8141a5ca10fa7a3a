package doctor

import "syscall"

// SysStatfs is statfs(2).
type SysStatfs struct{}

// Statfs implements Statfs: the space and inodes available to unprivileged users,
// which is what the kubelet's eviction signals measure.
func (SysStatfs) Statfs(p string) (FSStats, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(p, &st); err != nil {
		return FSStats{}, err
	}
	bs := uint64(st.Bsize)
	return FSStats{Bytes: st.Blocks * bs, BytesFree: st.Bavail * bs, Inodes: st.Files, InodesFree: st.Ffree}, nil
}
