package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
)

// toolXargs is xargs in its common forms: no options, -n N, -I R, -0 and -r; the
// command (echo when none) runs as the script's commands do, on the simulated node.
// Other options are refused by name.
// xargsOpts are the simulated options of xargs.
type xargsOpts struct {
	maxArgs       int
	replace       string
	null, noEmpty bool
	cmd           []string
}

// parseXargs reads xargs's options; bad names an option that is not simulated, or
// the usage error.
func parseXargs(args []string) (o xargsOpts, bad, usage string) {
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			i++
			break
		}
		switch {
		case a == "-0" || a == "--null":
			o.null = true
		case a == "-r" || a == "--no-run-if-empty":
			o.noEmpty = true
		case a == "-I" && i+1 < len(args):
			o.replace = args[i+1]
			i++
		case strings.HasPrefix(a, "-I") && len(a) > 2:
			o.replace = a[2:]
		case a == "-n" && i+1 < len(args), strings.HasPrefix(a, "-n") && len(a) > 2:
			v := strings.TrimPrefix(a, "-n")
			if v == "" {
				v = args[i+1]
				i++
			}
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return o, "", fmt.Sprintf("invalid number %q for -n option", v)
			}
			o.maxArgs = n
		case len(a) > 1 && a[0] == '-':
			return o, "xargs " + a, ""
		default:
			o.cmd = args[i:]
			return o, "", ""
		}
	}
	o.cmd = args[min(i, len(args)):]
	return o, "", ""
}

func toolXargs(t *toolCtx, args []string) error {
	o, bad, usage := parseXargs(args)
	switch {
	case bad != "":
		return t.s.refuseTool(t, bad)
	case usage != "":
		return t.errf(1, "%s", usage)
	}
	maxArgs, replace, null, noEmpty, cmd := o.maxArgs, o.replace, o.null, o.noEmpty, o.cmd
	if len(cmd) == 0 {
		cmd = []string{"echo"}
	}
	in, _ := t.input(nil)
	var items []string
	switch {
	case null:
		items = strings.Split(string(in), "\x00")
		if len(items) > 0 && items[len(items)-1] == "" {
			items = items[:len(items)-1]
		}
	case replace != "":
		for _, l := range lines(in) {
			if l = strings.TrimLeft(l, " \t"); l != "" {
				items = append(items, l)
			}
		}
	default:
		var ok bool
		if items, ok = xargsWords(string(in)); !ok {
			return t.errf(1, "unmatched quote; by default quotes are special to xargs unless you use the -0 option")
		}
	}
	var runs [][]string
	switch {
	case replace != "":
		for _, it := range items {
			run := make([]string, len(cmd))
			for k, c := range cmd {
				run[k] = strings.ReplaceAll(c, replace, it)
			}
			runs = append(runs, run)
		}
	case len(items) == 0:
		if !noEmpty {
			runs = append(runs, cmd)
		}
	case maxArgs > 0:
		for len(items) > 0 {
			n := min(maxArgs, len(items))
			runs = append(runs, append(append([]string{}, cmd...), items[:n]...))
			items = items[n:]
		}
	default:
		runs = append(runs, append(append([]string{}, cmd...), items...))
	}
	failed := false
	for _, run := range runs {
		var err error
		if run[0] == "echo" || run[0] == "printf" {
			err = tools()[run[0]](&toolCtx{s: t.s, sc: t.sc, hc: t.hc, ctx: t.ctx, name: run[0], at: t.at}, run[1:])
		} else {
			err = t.s.exec(t.ctx, t.sc, run)
		}
		var st interp.ExitStatus
		switch {
		case errors.As(err, &st):
			failed = true
		case err != nil:
			return err
		}
	}
	if failed {
		return interp.ExitStatus(123)
	}
	return nil
}

// xargsWords splits s at blanks and newlines, with xargs's quotes and backslashes.
func xargsWords(s string) ([]string, bool) {
	var out []string
	var b strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0 && c == '\n':
			return nil, false
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote, in = c, true
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
			in = true
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				out = append(out, b.String())
				b.Reset()
				in = false
			}
		default:
			b.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, false
	}
	if in {
		out = append(out, b.String())
	}
	return out, true
}

// toolEcho is /bin/echo (coreutils): -n, -e and -E.
func toolEcho(t *toolCtx, args []string) error {
	nl, esc := true, false
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && strings.Trim(args[0][1:], "neE") == "" {
		for _, c := range args[0][1:] {
			switch c {
			case 'n':
				nl = false
			case 'e':
				esc = true
			case 'E':
				esc = false
			}
		}
		args = args[1:]
	}
	s := strings.Join(args, " ")
	if esc {
		out, _, err := expand.Format(nil, strings.ReplaceAll(s, "%", "%%"), nil)
		if err != nil {
			return t.errf(1, "%v", err)
		}
		s = out
	}
	if nl {
		s += "\n"
	}
	return t.write([]byte(s))
}

// toolPrintf is /usr/bin/printf, formatting as the shell's printf.
func toolPrintf(t *toolCtx, args []string) error {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) == 0 {
		return t.errf(1, "missing operand")
	}
	if printfSize(args, t.s.opts.Limits.Expansion) < 0 {
		return t.s.stop(&LimitError{What: fmt.Sprintf("a printf field wider than %d bytes (%s)", t.s.opts.Limits.Expansion, t.at)})
	}
	format, rest := args[0], args[1:]
	var b strings.Builder
	for {
		out, n, err := expand.Format(nil, format, rest)
		if err != nil {
			return t.errf(1, "%v", err)
		}
		b.WriteString(out)
		rest = rest[n:]
		if n == 0 || len(rest) == 0 {
			break
		}
	}
	return t.write([]byte(b.String()))
}
