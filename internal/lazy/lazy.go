// Package lazy holds regular expressions compiled on first use. Go runs every
// linked package's initialisation at every start of the binary, bootstrap's
// included: a package-level regexp.MustCompile, or a sync.OnceValue call, is work
// (and allocation) before main for a check that a boot may never make. A Regexp
// declared as a composite literal of its expression is static data instead; the
// expression is compiled by the first Get.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp is a regular expression compiled on first use. Declare it at package
// level as a composite literal (var re = lazy.Regexp{Expr: `^a+$`}), which needs no
// initialisation, and use it through Get.
type Regexp struct {
	// Expr is the expression, in regexp's syntax; an invalid one panics at the
	// first Get, as regexp.MustCompile does.
	Expr string

	once sync.Once
	re   *regexp.Regexp
}

// Get returns the compiled expression, compiling it the first time. It is safe for
// concurrent use.
func (r *Regexp) Get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.Expr) })
	return r.re
}
