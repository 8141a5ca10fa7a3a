package sim

import "sync"

// lazy is a value built on first use. Its zero value is ready and costs nothing when
// the package is initialised, unlike a map literal, a sync.OnceValue or an init
// function. The tables and regular expressions were made lazy values when every
// eksboot process, the boot path included, initialised this package; only
// eksboot-render links it now (cli/rendercmd), and a render still builds only those
// its user data uses.
type lazy[T any] struct {
	once sync.Once
	v    T
}

// get returns the value, built by build the first time.
func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
