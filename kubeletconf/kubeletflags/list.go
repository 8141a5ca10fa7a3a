package kubeletflags

// Flags returns the flags kubelet 1.<minor> registers, sorted, without their leading
// "--" (nil for a minor that is not Known). It allocates: for messages, not lookups.
func Flags(minor int) []string {
	m := row(minor)
	if m == nil {
		return nil
	}
	var out []string
	for i, n := range names {
		if m.has.get(i) {
			out = append(out, n)
		}
	}
	return out
}
