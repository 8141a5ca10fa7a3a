package containerdconf

// mergeTables merges src into dst (TOML tables or JSON objects): nested ones
// recursively, any other value replaced by src's.
func mergeTables(dst, src map[string]any) {
	for k, sv := range src {
		if st, ok := sv.(map[string]any); ok {
			if dt, ok := dst[k].(map[string]any); ok {
				mergeTables(dt, st)
				continue
			}
		}
		dst[k] = sv
	}
}
