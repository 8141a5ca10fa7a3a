package sim

import "sync"

// lazy is a value built on first use. Its zero value is ready and costs nothing when
// the package is initialised, unlike a map literal, a sync.OnceValue or an init
// function: every eksboot process initialises this package (the boot path included,
// which never renders), so its tables and regular expressions are lazy values.
type lazy[T any] struct {
	once sync.Once
	v    T
}

// get returns the value, built by build the first time.
func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}
