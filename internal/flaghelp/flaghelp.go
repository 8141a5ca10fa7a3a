// Package flaghelp turns a pflag.FlagSet into what people read of it: the options
// block of a command's help, wrapped at Width columns, and the per-flag facts that
// shell completion and the man page need (the value's type, the values a flag takes,
// whether it names a file). It exists so that help, completion and eksboot(8) come
// from the one definition of each flag, the FlagSet the command parses.
//
// It replaces pflag's FlagUsages for help text: pflag takes a back-quoted word of the
// usage as the value's name (`--kubelet-version kubelet --version`), prints
// `-h, --help[=true|false]` for a bool, and does not wrap by default. Here the type
// is always the value's own (string, duration, int), a bool flag shows none, and the
// usage is printed as written.
package flaghelp

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// Width is the column that help lines stay within.
const Width = 100

// Annotation keys of a flag (pflag.FlagSet.SetAnnotation).
const (
	// ValuesKey lists the values a flag takes (completion offers them).
	ValuesKey = "eksboot_values"
	// ArgKey says what a flag's value names: "file" or "dir".
	ArgKey = "eksboot_arg"
)

// SetValues records the values flag name takes. It panics on an unknown flag: the
// names are the caller's own constants.
func SetValues(fs *pflag.FlagSet, name string, values ...string) {
	if err := fs.SetAnnotation(name, ValuesKey, values); err != nil {
		panic(err)
	}
}

// SetArg records that flag name's value is a "file" or a "dir".
func SetArg(fs *pflag.FlagSet, name, kind string) {
	if err := fs.SetAnnotation(name, ArgKey, []string{kind}); err != nil {
		panic(err)
	}
}

// Flag is what help, completion and the man page say of one flag.
type Flag struct {
	Name      string
	Shorthand string   // "" when none
	Type      string   // the value's type (string, duration, int); "" for a bool flag
	Usage     string   // as written
	Default   string   // "" when the default is the type's zero value
	Values    []string // the values it takes, when they are a list
	Arg       string   // "file", "dir" or ""
}

// Flags returns the visible flags of fs in its order (definition order when
// SortFlags is false).
func Flags(fs *pflag.FlagSet) []Flag {
	var out []Flag
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		d := Flag{Name: f.Name, Shorthand: f.Shorthand, Usage: f.Usage, Type: f.Value.Type()}
		if d.Type == "bool" {
			d.Type = ""
		} else if !zero(f.DefValue) {
			d.Default = f.DefValue
		}
		d.Values = f.Annotations[ValuesKey]
		if a := f.Annotations[ArgKey]; len(a) > 0 {
			d.Arg = a[0]
		}
		out = append(out, d)
	})
	return out
}

// zero reports a default that help leaves out.
func zero(v string) bool {
	switch v {
	case "", "0", "0s", "false", "[]":
		return true
	}
	return false
}

// Spec is the flag's left column: "-h, --help" or "    --root string".
func (f Flag) Spec() string {
	s := "    --" + f.Name
	if f.Shorthand != "" {
		s = "-" + f.Shorthand + ", --" + f.Name
	}
	if f.Type != "" {
		s += " " + f.Type
	}
	return s
}

// Text is the flag's description: its usage and its default.
func (f Flag) Text() string {
	if f.Default == "" {
		return f.Usage
	}
	return fmt.Sprintf("%s (default %s)", f.Usage, f.Default)
}

// maxColumn bounds the description column: a longer left column puts the flag's
// description on the lines below it.
const maxColumn = 36

// Write writes the options block of fs: one entry per visible flag, descriptions
// aligned and wrapped so that no line is longer than Width.
func Write(w io.Writer, fs *pflag.FlagSet) {
	WriteFlags(w, Flags(fs))
}

// WriteFlags is Write for a list of flags.
func WriteFlags(w io.Writer, flags []Flag) {
	col := 0
	for _, f := range flags {
		if n := 2 + len(f.Spec()) + 2; n > col && n <= maxColumn {
			col = n
		}
	}
	if col == 0 {
		col = maxColumn
	}
	var b strings.Builder
	for _, f := range flags {
		left := "  " + f.Spec()
		lines := Wrap(f.Text(), Width-col)
		if len(left)+2 > col {
			b.WriteString(left + "\n")
		} else if len(lines) > 0 {
			b.WriteString(left + strings.Repeat(" ", col-len(left)) + lines[0] + "\n")
			lines = lines[1:]
		}
		for _, l := range lines {
			b.WriteString(strings.Repeat(" ", col) + l + "\n")
		}
	}
	_, _ = io.WriteString(w, b.String())
}

// Wrap breaks text into lines of at most width bytes at spaces; a word longer than
// width gets a line of its own. Line breaks in text are kept.
func Wrap(text string, width int) []string {
	var lines []string
	for _, para := range strings.Split(text, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case len(line)+1+len(word) <= width:
				line += " " + word
			default:
				lines = append(lines, line)
				line = word
			}
		}
		lines = append(lines, line)
	}
	return lines
}
