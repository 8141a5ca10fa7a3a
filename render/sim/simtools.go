package sim

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"io/fs"
	"math/big"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/interp"

	"github.com/eksboot/eksboot/userdata"
)

// toolCtx is what a simulated program gets.
type toolCtx struct {
	s    *sim
	sc   *scriptRun
	hc   interp.HandlerContext
	ctx  context.Context
	name string
	at   string
}

func (t *toolCtx) errf(status uint8, format string, a ...any) error {
	fmt.Fprintf(t.hc.Stderr, t.name+": "+format+"\n", a...)
	return interp.ExitStatus(status)
}

// unsupported makes the call a no-op whose output is unknown, as for a program
// render does not simulate.
func (t *toolCtx) unsupported(args []string) error {
	t.s.noteNotSimulated(t.name + " " + quoteArgs(args, 40))
	if t.hc.Stdout != t.s.stdout {
		fmt.Fprint(t.hc.Stdout, t.s.unknown(fmt.Sprintf("the output of %s (%s)", quoteArgs(append([]string{t.name}, args...), 60), t.at)))
	}
	return nil
}

func (t *toolCtx) path(p string) string { return abs(t.hc.Dir, p) }

// input is the files named (or standard input for none or "-"), concatenated; a
// missing file is reported as the program would and makes the status 1.
func (t *toolCtx) input(files []string) ([]byte, uint8) {
	if len(files) == 0 {
		b, _ := io.ReadAll(io.LimitReader(t.hc.Stdin, int64(t.s.opts.Limits.Output)))
		return b, 0
	}
	var out []byte
	var status uint8
	for _, f := range files {
		if f == "-" {
			b, _ := io.ReadAll(io.LimitReader(t.hc.Stdin, int64(t.s.opts.Limits.Output)))
			out = append(out, b...)
			continue
		}
		b, ok := t.s.fs.read(t.path(f))
		if !ok {
			if t.s.fs.isDir(t.path(f)) {
				fmt.Fprintf(t.hc.Stderr, "%s: %s: Is a directory\n", t.name, f)
			} else {
				fmt.Fprintf(t.hc.Stderr, "%s: %s: No such file or directory\n", t.name, f)
			}
			status = 1
			continue
		}
		out = append(out, b...)
	}
	return out, status
}

func (t *toolCtx) write(b []byte) error {
	if err := t.s.produce(len(b), t.name, t.sc.where, int(t.hc.Pos.Line())); err != nil {
		return err
	}
	_, err := t.hc.Stdout.Write(b)
	return err
}

func statusErr(code uint8) error { return interp.ExitStatus(code) }

func status(code uint8) error {
	if code == 0 {
		return nil
	}
	return interp.ExitStatus(code)
}

// lines splits b into lines without their ends; a last line without one is kept.
func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.Split(s, "\n")
}

func joinLines(ls []string) []byte {
	if len(ls) == 0 {
		return nil
	}
	return []byte(strings.Join(ls, "\n") + "\n")
}

// toolTable holds tools' table, built on first use (see lazy).
var toolTable lazy[map[string]func(*toolCtx, []string) error]

// tools are the programs simulated in-process, on the simulated file system.
func tools() map[string]func(*toolCtx, []string) error {
	return toolTable.get(func() map[string]func(*toolCtx, []string) error {
		return map[string]func(*toolCtx, []string) error{
			"cat": toolCat, "tr": toolTr, "cut": toolCut, "head": toolHead, "tail": toolTail,
			"grep": toolGrep, "egrep": toolGrep, "sed": toolSed, "basename": toolBasename, "dirname": toolDirname,
			"tee": toolTee, "mkdir": toolMkdir, "chmod": toolChmod, "chown": toolNop, "rm": toolRm,
			"mv": toolMv, "cp": toolCp, "touch": toolTouch, "wc": toolWc, "sort": toolSort, "uniq": toolUniq,
			"base64": toolBase64, "sleep": toolNop, "sync": toolNop, "logger": toolNop, "ln": toolLn,
			"curl": toolCurl, "wget": toolWget, "ec2-metadata": toolEC2Metadata, "imds": toolIMDS, "which": toolWhich,
			"seq": toolSeq, "jq": toolJQ, "xargs": toolXargs, "echo": toolEcho, "printf": toolPrintf,
		}
	})
}

func toolNop(*toolCtx, []string) error { return nil }

// splitOpts separates the leading options (to "--") from the operands.
func splitOpts(args []string) (opts, rest []string) {
	for i, a := range args {
		if a == "--" {
			return opts, args[i+1:]
		}
		if len(a) > 1 && a[0] == '-' {
			opts = append(opts, a)
			continue
		}
		return opts, args[i:]
	}
	return opts, nil
}

func toolCat(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	if len(opts) > 0 {
		return t.unsupported(args)
	}
	b, st := t.input(files)
	if err := t.write(b); err != nil {
		return err
	}
	return status(st)
}

func toolTee(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	appendTo := slices.Contains(opts, "-a") || slices.Contains(opts, "--append")
	b, _ := t.input(nil)
	for _, f := range files {
		if err := t.s.fs.write(t.path(f), b, appendTo, 0); err != nil {
			return err
		}
	}
	return t.write(b)
}

func toolBasename(t *toolCtx, args []string) error {
	if len(args) == 0 || len(args) > 2 || strings.HasPrefix(args[0], "-") {
		return t.unsupported(args)
	}
	b := strings.TrimRight(args[0], "/")
	if b == "" {
		b = "/"
	} else {
		b = path.Base(b)
	}
	if len(args) == 2 && b != args[1] {
		b = strings.TrimSuffix(b, args[1])
	}
	return t.write([]byte(b + "\n"))
}

func toolDirname(t *toolCtx, args []string) error {
	if len(args) != 1 {
		return t.unsupported(args)
	}
	return t.write([]byte(path.Dir(strings.TrimRight(args[0], "/")) + "\n"))
}

func toolMkdir(t *toolCtx, args []string) error {
	_, dirs := splitOpts(args)
	for _, d := range dirs {
		t.s.fs.mkdirAll(t.path(d))
	}
	return nil
}

func toolChmod(t *toolCtx, args []string) error {
	_, rest := splitOpts(args)
	if len(rest) < 2 {
		return t.unsupported(args)
	}
	mode, files := rest[0], rest[1:]
	for _, f := range files {
		p := t.path(f)
		if !t.s.fs.isFile(p) {
			if t.s.fs.isDir(p) {
				continue
			}
			return t.errf(1, "cannot access '%s': No such file or directory", f)
		}
		var set func(fs.FileMode) fs.FileMode
		if n, err := strconv.ParseUint(mode, 8, 32); err == nil {
			set = func(fs.FileMode) fs.FileMode { return fs.FileMode(n) & fs.ModePerm }
		} else {
			switch {
			case strings.HasSuffix(mode, "+x"):
				set = func(m fs.FileMode) fs.FileMode { return m | 0o111 }
			case strings.HasSuffix(mode, "-x"):
				set = func(m fs.FileMode) fs.FileMode { return m &^ 0o111 }
			default:
				return t.unsupported(args)
			}
		}
		t.s.fs.setMode(p, set)
	}
	return nil
}

func toolRm(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	force := slices.ContainsFunc(opts, func(o string) bool { return strings.Contains(o, "f") })
	for _, f := range files {
		if !t.s.fs.remove(t.path(f)) && !force && !t.s.fs.isDir(t.path(f)) {
			return t.errf(1, "cannot remove '%s': No such file or directory", f)
		}
	}
	return nil
}

func toolMv(t *toolCtx, args []string) error { return copyFile(t, args, true) }
func toolCp(t *toolCtx, args []string) error { return copyFile(t, args, false) }
func toolLn(t *toolCtx, args []string) error { return copyFile(t, args, false) }
func copyFile(t *toolCtx, args []string, move bool) error {
	_, rest := splitOpts(args)
	if len(rest) != 2 {
		return t.unsupported(args)
	}
	src, dst := t.path(rest[0]), t.path(rest[1])
	f, ok := t.s.fs.file(src)
	if !ok {
		return t.errf(1, "cannot stat '%s': No such file or directory", rest[0])
	}
	if t.s.fs.isDir(dst) {
		dst = path.Join(dst, path.Base(src))
	}
	if err := t.s.fs.write(dst, f.Data, false, f.Mode); err != nil {
		return err
	}
	t.s.fs.setMode(dst, func(fs.FileMode) fs.FileMode { return f.Mode })
	if move && src != dst {
		t.s.fs.remove(src)
	}
	return nil
}

func toolTouch(t *toolCtx, args []string) error {
	_, files := splitOpts(args)
	for _, f := range files {
		if !t.s.fs.isFile(t.path(f)) {
			if err := t.s.fs.write(t.path(f), nil, true, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// count parses a head/tail count: "5", "+5" (tail: from line 5), "-5".
func count(s string) (int, bool, bool) {
	from := strings.HasPrefix(s, "+")
	n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-"))
	return n, from, err == nil && n >= 0
}

func headTail(t *toolCtx, args []string, head bool) error {
	n, from, bytesMode := 10, false, false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-n" || a == "-c") && i+1 < len(args):
			var ok bool
			if n, from, ok = count(args[i+1]); !ok {
				return t.unsupported(args)
			}
			bytesMode = a == "-c"
			i++
		case strings.HasPrefix(a, "-n") || strings.HasPrefix(a, "-c"):
			var ok bool
			if n, from, ok = count(a[2:]); !ok {
				return t.unsupported(args)
			}
			bytesMode = a[1] == 'c'
		case len(a) > 1 && a[0] == '-':
			var ok bool
			if n, _, ok = count(a[1:]); !ok {
				return t.unsupported(args)
			}
		default:
			files = append(files, a)
		}
	}
	b, st := t.input(files)
	if bytesMode {
		switch {
		case head:
			b = b[:min(n, len(b))]
		case from:
			b = b[min(max(n-1, 0), len(b)):]
		default:
			b = b[max(len(b)-n, 0):]
		}
		if err := t.write(b); err != nil {
			return err
		}
		return status(st)
	}
	ls := lines(b)
	switch {
	case head:
		ls = ls[:min(n, len(ls))]
	case from:
		ls = ls[min(max(n-1, 0), len(ls)):]
	default:
		ls = ls[max(len(ls)-n, 0):]
	}
	if err := t.write(joinLines(ls)); err != nil {
		return err
	}
	return status(st)
}

func toolHead(t *toolCtx, args []string) error { return headTail(t, args, true) }
func toolTail(t *toolCtx, args []string) error { return headTail(t, args, false) }

// trSet expands a tr set: ranges, escapes and the common classes.
func trSet(s string) ([]byte, bool) {
	classes := map[string]string{
		"[:upper:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "[:lower:]": "abcdefghijklmnopqrstuvwxyz",
		"[:digit:]": "0123456789", "[:space:]": " \t\n\v\f\r", "[:blank:]": " \t",
		"[:alpha:]": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
		"[:alnum:]": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	}
	var raw []byte
	for i := 0; i < len(s); i++ {
		if s[i] == '[' && strings.HasPrefix(s[i:], "[:") {
			end := strings.Index(s[i:], ":]")
			if end < 0 {
				return nil, false
			}
			c, ok := classes[s[i:i+end+2]]
			if !ok {
				return nil, false
			}
			raw = append(raw, c...)
			i += end + 1
			continue
		}
		c := s[i]
		if c == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			case 'r':
				c = '\r'
			default:
				c = s[i]
			}
		}
		if i+2 < len(s) && s[i+1] == '-' {
			hi := s[i+2]
			if hi < c {
				return nil, false
			}
			for x := int(c); x <= int(hi); x++ {
				raw = append(raw, byte(x))
			}
			i += 2
			continue
		}
		raw = append(raw, c)
	}
	return raw, true
}

func toolTr(t *toolCtx, args []string) error {
	del, squeeze := false, false
	i := 0
	for ; i < len(args) && len(args[i]) > 1 && args[i][0] == '-'; i++ {
		for _, c := range args[i][1:] {
			switch c {
			case 'd':
				del = true
			case 's':
				squeeze = true
			default:
				return t.unsupported(args)
			}
		}
	}
	sets := args[i:]
	if len(sets) == 0 || len(sets) > 2 || (del && len(sets) != 1 && !squeeze) {
		return t.unsupported(args)
	}
	s1, ok := trSet(sets[0])
	if !ok {
		return t.unsupported(args)
	}
	var s2 []byte
	if len(sets) == 2 {
		if s2, ok = trSet(sets[1]); !ok || len(s2) == 0 {
			return t.unsupported(args)
		}
	}
	var table [256]int
	for j := range table {
		table[j] = j
	}
	in1 := [256]bool{}
	for j, c := range s1 {
		in1[c] = true
		switch {
		case del:
			table[c] = -1
		case s2 != nil:
			table[c] = int(s2[min(j, len(s2)-1)])
		}
	}
	sq := in1
	if s2 != nil && !del {
		sq = [256]bool{}
		for _, c := range s2 {
			sq[c] = true
		}
	}
	b, _ := t.input(nil)
	out := make([]byte, 0, len(b))
	for _, c := range b {
		m := table[c]
		if m < 0 {
			continue
		}
		if squeeze && len(out) > 0 && out[len(out)-1] == byte(m) && sq[byte(m)] {
			continue
		}
		out = append(out, byte(m))
	}
	return t.write(out)
}

// fieldList parses cut's LIST: N, N-M, N-, -M, comma-separated; fields from 1.
func fieldList(s string) (func(int) bool, bool) {
	type rng struct{ lo, hi int }
	var rs []rng
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		r := rng{1, 1 << 30}
		var err error
		if lo != "" {
			if r.lo, err = strconv.Atoi(lo); err != nil || r.lo < 1 {
				return nil, false
			}
		}
		switch {
		case !isRange:
			r.hi = r.lo
		case hi != "":
			if r.hi, err = strconv.Atoi(hi); err != nil {
				return nil, false
			}
		}
		rs = append(rs, r)
	}
	return func(n int) bool {
		for _, r := range rs {
			if n >= r.lo && n <= r.hi {
				return true
			}
		}
		return false
	}, true
}

func toolCut(t *toolCtx, args []string) error {
	delim, list, chars := "\t", "", false
	onlyDelim := false
	var files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		next := func() (string, bool) {
			if len(a) > 2 {
				return a[2:], true
			}
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		var ok bool
		switch {
		case strings.HasPrefix(a, "-d"):
			if delim, ok = next(); !ok || len(delim) != 1 {
				return t.unsupported(args)
			}
		case strings.HasPrefix(a, "-f"), strings.HasPrefix(a, "-c"), strings.HasPrefix(a, "-b"):
			chars = a[1] != 'f'
			if list, ok = next(); !ok {
				return t.unsupported(args)
			}
		case a == "-s":
			onlyDelim = true
		case len(a) > 1 && a[0] == '-':
			return t.unsupported(args)
		default:
			files = append(files, a)
		}
	}
	sel, ok := fieldList(list)
	if !ok {
		return t.unsupported(args)
	}
	b, st := t.input(files)
	var out []string
	for _, l := range lines(b) {
		if chars {
			var sb strings.Builder
			for j := 0; j < len(l); j++ {
				if sel(j + 1) {
					sb.WriteByte(l[j])
				}
			}
			out = append(out, sb.String())
			continue
		}
		if !strings.Contains(l, delim) {
			if !onlyDelim {
				out = append(out, l)
			}
			continue
		}
		var keep []string
		for j, f := range strings.Split(l, delim) {
			if sel(j + 1) {
				keep = append(keep, f)
			}
		}
		out = append(out, strings.Join(keep, delim))
	}
	if err := t.write(joinLines(out)); err != nil {
		return err
	}
	return status(st)
}

func toolWc(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	b, st := t.input(files)
	var nums []string
	want := strings.Join(opts, "")
	if want == "" {
		want = "lwc"
	}
	for _, c := range want {
		switch c {
		case 'l':
			nums = append(nums, strconv.Itoa(bytes.Count(b, []byte("\n"))))
		case 'w':
			nums = append(nums, strconv.Itoa(len(strings.Fields(string(b)))))
		case 'c':
			nums = append(nums, strconv.Itoa(len(b)))
		case '-':
		default:
			return t.unsupported(args)
		}
	}
	line := strings.Join(nums, " ")
	if len(files) == 1 {
		line += " " + files[0]
	} else if len(files) > 1 {
		return t.unsupported(args)
	}
	if err := t.write([]byte(line + "\n")); err != nil {
		return err
	}
	return status(st)
}

func toolSort(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	uniq, rev := false, false
	for _, o := range opts {
		for _, c := range o[1:] {
			switch c {
			case 'u':
				uniq = true
			case 'r':
				rev = true
			default:
				return t.unsupported(args)
			}
		}
	}
	b, st := t.input(files)
	ls := lines(b)
	sort.Strings(ls)
	if uniq {
		ls = slices.Compact(ls)
	}
	if rev {
		slices.Reverse(ls)
	}
	if err := t.write(joinLines(ls)); err != nil {
		return err
	}
	return status(st)
}

func toolUniq(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	if len(opts) > 0 || len(files) > 1 {
		return t.unsupported(args)
	}
	b, st := t.input(files)
	if err := t.write(joinLines(slices.Compact(lines(b)))); err != nil {
		return err
	}
	return status(st)
}

func toolSeq(t *toolCtx, args []string) error {
	var n []*big.Int
	for _, a := range args {
		v, ok := new(big.Int).SetString(a, 10)
		if !ok {
			return t.unsupported(args)
		}
		n = append(n, v)
	}
	first, step, last := big.NewInt(1), big.NewInt(1), new(big.Int)
	switch len(n) {
	case 1:
		last = n[0]
	case 2:
		first, last = n[0], n[1]
	case 3:
		first, step, last = n[0], n[1], n[2]
	default:
		return t.unsupported(args)
	}
	if step.Sign() == 0 {
		return t.unsupported(args)
	}
	// the numbers, (last-first)/step+1, times their width, before any is made
	count := new(big.Int).Sub(last, first)
	count.Quo(count, step)
	if count.Sign() < 0 {
		return nil
	}
	width := max(len(first.String()), len(last.String())) + 1
	size := new(big.Int).Mul(new(big.Int).Add(count, big.NewInt(1)), big.NewInt(int64(width)))
	if size.Cmp(big.NewInt(int64(t.s.opts.Limits.Data))) > 0 {
		return t.s.stop(&LimitError{What: fmt.Sprintf("seq of %s numbers, more than %d bytes (%s)", new(big.Int).Add(count, big.NewInt(1)), t.s.opts.Limits.Data, t.at)})
	}
	var b strings.Builder
	for i := new(big.Int).Set(first); (step.Sign() > 0 && i.Cmp(last) <= 0) || (step.Sign() < 0 && i.Cmp(last) >= 0); i.Add(i, step) {
		b.WriteString(i.String())
		b.WriteByte('\n')
	}
	return t.write([]byte(b.String()))
}

func toolBase64(t *toolCtx, args []string) error {
	opts, files := splitOpts(args)
	decode, wrap := false, 76
	for i := 0; i < len(opts); i++ {
		switch o := opts[i]; {
		case o == "-d" || o == "--decode":
			decode = true
		case o == "-w0" || o == "--wrap=0":
			wrap = 0
		case o == "-w" && len(files) > 0:
			w, err := strconv.Atoi(files[0])
			if err != nil {
				return t.unsupported(args)
			}
			wrap, files = w, files[1:]
		default:
			return t.unsupported(args)
		}
	}
	b, st := t.input(files)
	if decode {
		out, err := base64.StdEncoding.DecodeString(userdata.StripSpace(b))
		if err != nil {
			return t.errf(1, "invalid input")
		}
		return t.write(out)
	}
	enc := base64.StdEncoding.EncodeToString(b)
	var sb strings.Builder
	for wrap > 0 && len(enc) > wrap {
		sb.WriteString(enc[:wrap] + "\n")
		enc = enc[wrap:]
	}
	sb.WriteString(enc + "\n")
	if err := t.write([]byte(sb.String())); err != nil {
		return err
	}
	return status(st)
}

func toolWhich(t *toolCtx, args []string) error {
	return t.s.lookPath(t.hc, append([]string{"which"}, args...))
}

// grepOpts are the options of grep that are simulated.
type grepOpts struct {
	quiet, invert, icase, ere, fixed, only, count, whole bool
	pats, files                                          []string
}

// parseGrep reads grep's arguments; ok is false for an option not simulated.
func parseGrep(args []string, egrep bool) (grepOpts, bool) {
	o := grepOpts{ere: egrep}
	flags := map[rune]*bool{'q': &o.quiet, 'v': &o.invert, 'i': &o.icase, 'E': &o.ere, 'F': &o.fixed, 'o': &o.only, 'c': &o.count, 'x': &o.whole, 's': new(bool), 'h': new(bool)}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			o.pats = append(o.pats, args[i+1])
			i++
		case a == "--":
			o.files = append(o.files, args[i+1:]...)
			i = len(args)
		case a == "--quiet" || a == "--silent":
			o.quiet = true
		case strings.HasPrefix(a, "--"):
			return o, false
		case len(a) > 1 && a[0] == '-':
			for _, c := range a[1:] {
				f, ok := flags[c]
				if !ok {
					return o, false
				}
				*f = true
			}
		case o.pats == nil:
			o.pats = []string{a}
		default:
			o.files = append(o.files, a)
		}
	}
	return o, len(o.pats) > 0 && len(o.files) <= 1
}

// grepRE is the one regular expression of grep's patterns.
func (o grepOpts) regexp() (*regexp.Regexp, bool) {
	var alts []string
	for _, p := range o.pats {
		for _, one := range strings.Split(p, "\n") {
			re, ok := regexp.QuoteMeta(one), true
			if !o.fixed {
				re, ok = convertRE(one, o.ere, 0)
			}
			if !ok {
				return nil, false
			}
			alts = append(alts, "(?:"+re+")")
		}
	}
	expr := strings.Join(alts, "|")
	if o.whole {
		expr = "^(?:" + expr + ")$"
	}
	if o.icase {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	return re, err == nil
}

// toolGrep is grep with -q -v -i -E -F -o -c -x -s -h -e.
func toolGrep(t *toolCtx, args []string) error {
	o, ok := parseGrep(args, t.name == "egrep")
	if !ok {
		return t.unsupported(args)
	}
	re, ok := o.regexp()
	if !ok {
		return t.unsupported(args)
	}
	b, st := t.input(o.files)
	if st != 0 {
		return interp.ExitStatus(2)
	}
	n := 0
	var out []string
	for _, l := range lines(b) {
		if re.MatchString(l) == o.invert {
			continue
		}
		n++
		if o.only && !o.invert {
			out = append(out, re.FindAllString(l, -1)...)
		} else {
			out = append(out, l)
		}
	}
	switch {
	case o.quiet:
	case o.count:
		if err := t.write([]byte(strconv.Itoa(n) + "\n")); err != nil {
			return err
		}
	default:
		if err := t.write(joinLines(out)); err != nil {
			return err
		}
	}
	if n == 0 {
		return interp.ExitStatus(1)
	}
	return nil
}

// convertRE turns a POSIX basic (or extended) regular expression into Go's syntax;
// delim, when not 0, is sed's delimiter, which a backslash makes literal.
func convertRE(s string, ere bool, delim byte) (string, bool) {
	var b strings.Builder
	atStart := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		start := atStart
		atStart = false
		switch {
		case c == '\\' && i+1 < len(s):
			i++
			var ok bool
			if atStart, ok = convertEscape(&b, s[i], ere, delim); !ok {
				return "", false
			}
		case c == '[':
			end, ok := copyBracket(&b, s, i)
			if !ok {
				return "", false
			}
			i = end
		case c == '^':
			atStart = convertCaret(&b, ere, start)
		case c == '$':
			end := i == len(s)-1 || (!ere && (strings.HasPrefix(s[i+1:], `\)`) || strings.HasPrefix(s[i+1:], `\|`)))
			if ere || end {
				b.WriteByte('$')
			} else {
				b.WriteString(`\$`)
			}
		default:
			atStart = convertPlain(&b, c, ere, start)
		}
	}
	return b.String(), true
}

// convertEscape writes the Go form of \d; it reports whether what follows is at the
// start of a group, and false for what RE2 lacks (back-references).
func convertEscape(b *strings.Builder, d byte, ere bool, delim byte) (atStart, ok bool) {
	switch {
	case delim != 0 && d == delim:
		b.WriteString(regexp.QuoteMeta(string(d)))
	case !ere && strings.IndexByte("(){}|+?", d) >= 0:
		b.WriteByte(d)
		return d == '(' || d == '|', true
	case d == 'n':
		b.WriteString(`\n`)
	case d == 't':
		b.WriteString(`\t`)
	case d >= '1' && d <= '9':
		return false, false
	case d == '<' || d == '>':
		b.WriteString(`\b`)
	case strings.IndexByte("wWsSbB", d) >= 0:
		b.WriteByte('\\')
		b.WriteByte(d)
	default:
		b.WriteString(regexp.QuoteMeta(string(d)))
	}
	return false, true
}

// copyBracket copies the bracket expression at s[i] ([...], [^]...], [[:alpha:]])
// and returns the index of its closing ].
func copyBracket(b *strings.Builder, s string, i int) (int, bool) {
	j := i + 1
	if j < len(s) && s[j] == '^' {
		j++
	}
	if j < len(s) && s[j] == ']' {
		j++
	}
	for j < len(s) && s[j] != ']' {
		if s[j] == '[' && j+1 < len(s) && s[j+1] == ':' {
			if k := strings.Index(s[j:], ":]"); k > 0 {
				j += k + 2
				continue
			}
		}
		j++
	}
	if j >= len(s) {
		return 0, false
	}
	b.WriteByte('[')
	b.WriteString(strings.ReplaceAll(s[i+1:j], `\`, `\\`)) // a backslash is literal in POSIX brackets
	b.WriteByte(']')
	return j, true
}

func convertCaret(b *strings.Builder, ere, start bool) bool {
	if ere || start {
		b.WriteByte('^')
		return true
	}
	b.WriteString(`\^`)
	return false
}

// convertPlain writes an unescaped character; it reports whether a group starts.
func convertPlain(b *strings.Builder, c byte, ere, start bool) bool {
	switch {
	case c == '*' && start:
		b.WriteString(`\*`)
	case !ere && strings.IndexByte("(){}|+?", c) >= 0:
		b.WriteString(regexp.QuoteMeta(string(c)))
	case ere && (c == '(' || c == '|'):
		b.WriteByte(c)
		return true
	case c == '.' || c == '*' || (ere && strings.IndexByte("(){}|+?", c) >= 0):
		b.WriteByte(c)
	default:
		b.WriteString(regexp.QuoteMeta(string(c)))
	}
	return false
}

// sedCmd is one command of a sed script: s, d or p, with an optional address.
type sedCmd struct {
	addrLine int            // 0: none, -1: the last line
	addrRE   *regexp.Regexp // or a /re/ address
	cmd      byte
	re       *regexp.Regexp
	repl     string
	global   bool
	nth      int
	print    bool
}

// parseSed parses a script of s///, /re/d, Nd, $d and p commands.
func parseSed(script string, ere bool) ([]sedCmd, bool) {
	var cmds []sedCmd
	s := script
	for {
		s = strings.TrimLeft(s, " \t\n;")
		if s == "" {
			return cmds, true
		}
		var c sedCmd
		var ok bool
		if s, ok = sedAddress(&c, s, ere); !ok {
			return nil, false
		}
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, false
		}
		c.cmd, s = s[0], s[1:]
		switch c.cmd {
		case 'd', 'p':
		case 's':
			if s, ok = sedSubst(&c, s, ere); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		cmds = append(cmds, c)
	}
}

// sedAddress reads an optional address: N, $ or /re/.
func sedAddress(c *sedCmd, s string, ere bool) (string, bool) {
	switch {
	case s[0] == '$':
		c.addrLine = -1
		return s[1:], true
	case s[0] >= '0' && s[0] <= '9':
		j := 0
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		c.addrLine, _ = strconv.Atoi(s[:j])
		return s[j:], true
	case s[0] == '/':
		re, rest, ok := sedField(s[1:], '/')
		if !ok {
			return "", false
		}
		conv, ok := convertRE(re, ere, '/')
		if !ok {
			return "", false
		}
		c.addrRE, ok = compile(conv)
		return rest, ok
	}
	return s, true
}

// sedSubst reads s's delimiter, regular expression, replacement and flags.
func sedSubst(c *sedCmd, s string, ere bool) (string, bool) {
	if s == "" {
		return "", false
	}
	d := s[0]
	re, rest, ok := sedField(s[1:], d)
	if !ok {
		return "", false
	}
	repl, rest, ok := sedField(rest, d)
	if !ok {
		return "", false
	}
	conv, ok := convertRE(re, ere, d)
	if !ok {
		return "", false
	}
	for rest != "" && strings.IndexByte("; \n}", rest[0]) < 0 {
		switch f := rest[0]; {
		case f == 'g':
			c.global = true
		case f == 'p':
			c.print = true
		case f == 'I' || f == 'i':
			conv = "(?i)" + conv
		case f >= '1' && f <= '9':
			c.nth = int(f - '0')
		default:
			return "", false
		}
		rest = rest[1:]
	}
	c.re, ok = compile(conv)
	c.repl = repl
	return rest, ok
}

func compile(re string) (*regexp.Regexp, bool) {
	r, err := regexp.Compile(re)
	return r, err == nil
}

// sedField reads up to the unescaped delimiter d; escapes stay for the caller.
func sedField(s string, d byte) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case d:
			return s[:i], s[i+1:], true
		}
	}
	return "", "", false
}

// sedReplace expands a replacement: & is the match, \1-\9 the groups, \n a newline.
func sedReplace(repl, line string, m []int) string {
	var b strings.Builder
	for i := 0; i < len(repl); i++ {
		c := repl[i]
		switch {
		case c == '&':
			b.WriteString(line[m[0]:m[1]])
		case c == '\\' && i+1 < len(repl):
			i++
			d := repl[i]
			switch {
			case d >= '0' && d <= '9':
				if g := int(d - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
					b.WriteString(line[m[2*g]:m[2*g+1]])
				}
			case d == 'n':
				b.WriteByte('\n')
			case d == 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(d)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// replLen is the length of sedReplace's answer, without making it.
func replLen(repl string, m []int) int {
	n := 0
	for i := 0; i < len(repl); i++ {
		switch c := repl[i]; {
		case c == '&':
			n += m[1] - m[0]
		case c == '\\' && i+1 < len(repl):
			i++
			if d := repl[i]; d >= '0' && d <= '9' {
				if g := int(d - '0'); 2*g+1 < len(m) && m[2*g] >= 0 {
					n += m[2*g+1] - m[2*g]
				}
			} else {
				n++
			}
		default:
			n++
		}
	}
	return n
}

// runSed runs cmds over in; ok is false when the output would pass limit bytes.
func runSed(cmds []sedCmd, in []byte, quiet bool, limit int) (_ []byte, ok bool) {
	ls := lines(in)
	var out bytes.Buffer
	for n, l := range ls {
		deleted := false
		for _, c := range cmds {
			match := true
			switch {
			case c.addrLine == -1:
				match = n == len(ls)-1
			case c.addrLine > 0:
				match = n+1 == c.addrLine
			case c.addrRE != nil:
				match = c.addrRE.MatchString(l)
			}
			if !match {
				continue
			}
			switch c.cmd {
			case 'd':
				deleted = true
			case 'p':
				out.WriteString(l + "\n")
			case 's':
				ms := c.re.FindAllStringSubmatchIndex(l, -1)
				if len(ms) == 0 {
					continue
				}
				var b strings.Builder
				last := 0
				done := false
				size := out.Len() + len(l)
				for k, m := range ms {
					if done || (c.nth > 0 && k+1 != c.nth) {
						continue
					}
					if size += replLen(c.repl, m); size > limit {
						return nil, false
					}
					b.WriteString(l[last:m[0]])
					b.WriteString(sedReplace(c.repl, l, m))
					last = m[1]
					if !c.global {
						done = true
					}
				}
				b.WriteString(l[last:])
				l = b.String()
				if c.print {
					out.WriteString(l + "\n")
				}
			}
			if deleted {
				break
			}
		}
		if !deleted && !quiet {
			out.WriteString(l + "\n")
		}
	}
	b := out.Bytes()
	if len(in) > 0 && in[len(in)-1] != '\n' && len(b) > 0 && !quiet {
		b = b[:len(b)-1]
	}
	return b, true
}

func (t *toolCtx) sedLimit() error {
	return t.s.stop(&LimitError{What: fmt.Sprintf("sed output of more than %d bytes (%s)", t.s.opts.Limits.Expansion, t.at)})
}

// toolSed is sed with -i, -n, -E/-r and -e, running s, d and p commands.
func toolSed(t *toolCtx, args []string) error {
	inPlace, quiet, ere := false, false, false
	var scripts, files []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-e" && i+1 < len(args):
			scripts = append(scripts, args[i+1])
			i++
		case a == "--in-place" || strings.HasPrefix(a, "-i"):
			if len(a) > 2 && a != "--in-place" && strings.Trim(a[2:], "Enr") != "" {
				return t.unsupported(args) // a backup suffix
			}
			inPlace = true
			quiet = quiet || strings.Contains(a[2:], "n")
			ere = ere || strings.ContainsAny(a[2:], "Er")
		case a == "-n" || a == "--quiet":
			quiet = true
		case a == "-E" || a == "-r":
			ere = true
		case len(a) > 1 && a[0] == '-':
			return t.unsupported(args)
		case len(scripts) == 0:
			scripts = append(scripts, a)
		default:
			files = append(files, a)
		}
	}
	if len(scripts) == 0 {
		return t.unsupported(args)
	}
	cmds, ok := parseSed(strings.Join(scripts, "\n"), ere)
	if !ok {
		if inPlace {
			for _, f := range files {
				t.s.noteNotSimulated("sed -i on " + f)
			}
		}
		return t.unsupported(args)
	}
	if !inPlace {
		b, st := t.input(files)
		out, ok := runSed(cmds, b, quiet, t.s.opts.Limits.Expansion)
		if !ok {
			return t.sedLimit()
		}
		if err := t.write(out); err != nil {
			return err
		}
		return status(st)
	}
	for _, f := range files {
		p := t.path(f)
		file, ok := t.s.fs.file(p)
		if !ok {
			return t.errf(2, "can't read %s: No such file or directory", f)
		}
		out, ok := runSed(cmds, file.Data, quiet, t.s.opts.Limits.Output)
		if !ok {
			return t.sedLimit()
		}
		mode := file.Mode
		if err := t.s.fs.write(p, out, false, mode); err != nil {
			return err
		}
		t.s.note("%s: sed -i edits %s", t.at, p)
	}
	return nil
}

// imdsHost reports whether a URL is IMDS's and returns the path after /latest/.
func imdsPath(u string) (string, bool) {
	for _, h := range []string{"http://169.254.169.254/", "http://[fd00:ec2::254]/", "http://instance-data/", "http://instance-data.ec2.internal/"} {
		if rest, ok := strings.CutPrefix(u, h); ok {
			rest = strings.TrimPrefix(rest, "latest/")
			return rest, true
		}
	}
	return "", false
}

// fetch answers a URL from the simulated instance, or a placeholder for one known
// only at boot.
func (t *toolCtx) fetch(u, method string) (string, bool) {
	p, ok := imdsPath(u)
	if !ok {
		t.s.noteNotSimulated(t.name + " " + u)
		return t.s.unknown(fmt.Sprintf("the answer of %s (%s)", u, t.at)), true
	}
	if p == "api/token" {
		if method != "PUT" {
			return "", false
		}
		return simulatedToken, true
	}
	v, ok := t.s.opts.Metadata(strings.TrimSuffix(p, "/"))
	if !ok {
		return t.s.unknown(fmt.Sprintf("IMDS %s, which the simulated instance does not have (%s)", p, t.at)), true
	}
	return v, true
}

// simulatedToken is the IMDSv2 session token render's instance hands out.
const simulatedToken = "simulated-imds-session-token"

var curlValued = []string{
	"-X", "--request", "-H", "--header", "-o", "--output", "-m", "--max-time", "--connect-timeout", "--retry", "--retry-delay",
	"--retry-max-time", "-w", "--write-out", "-A", "--user-agent", "-d", "--data", "-u", "--user", "-e", "--referer", "--cacert", "-T", "--upload-file", "--noproxy", "-x", "--proxy",
}

func toolCurl(t *toolCtx, args []string) error {
	method, out, fail := "GET", "", false
	var urls []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case slices.Contains(curlValued, a) && i+1 < len(args):
			switch a {
			case "-X", "--request":
				method = args[i+1]
			case "-o", "--output":
				out = args[i+1]
			}
			i++
		case strings.HasPrefix(a, "-X") && len(a) > 2:
			method = a[2:]
		case strings.HasPrefix(a, "--"):
			fail = fail || a == "--fail"
		case strings.HasPrefix(a, "-") && len(a) > 1:
			fail = fail || strings.Contains(a, "f")
			if strings.HasSuffix(a, "o") && i+1 < len(args) {
				out = args[i+1]
				i++
			}
		default:
			urls = append(urls, a)
		}
	}
	if len(urls) != 1 {
		return t.unsupported(args)
	}
	body, ok := t.fetch(urls[0], method)
	if !ok {
		if fail {
			return interp.ExitStatus(22)
		}
		body = "401 - Unauthorized"
	}
	if out != "" && out != "-" {
		return t.s.fs.write(t.path(out), []byte(body), false, 0o644)
	}
	return t.write([]byte(body))
}

func toolWget(t *toolCtx, args []string) error {
	out := ""
	method := "GET"
	var urls []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-O" || a == "--output-document") && i+1 < len(args):
			out = args[i+1]
			i++
		case strings.HasPrefix(a, "-O"):
			out = a[2:]
		case strings.HasPrefix(a, "-qO"):
			out = a[3:]
		case strings.HasPrefix(a, "--method="):
			method = strings.TrimPrefix(a, "--method=")
		case (a == "--header" || a == "-T" || a == "--timeout" || a == "-t" || a == "--tries") && i+1 < len(args):
			i++
		case strings.HasPrefix(a, "-"):
		default:
			urls = append(urls, a)
		}
	}
	if len(urls) != 1 {
		return t.unsupported(args)
	}
	body, ok := t.fetch(urls[0], method)
	if !ok {
		return interp.ExitStatus(8)
	}
	if out == "" {
		out = path.Base(urls[0])
	}
	if out == "-" {
		return t.write([]byte(body))
	}
	return t.s.fs.write(t.path(out), []byte(body), false, 0o644)
}

// ec2MetadataTable holds ec2MetadataOpts' table, built on first use (see lazy).
var ec2MetadataTable lazy[map[string][2]string]

// ec2MetadataOpts are ec2-metadata's options and the IMDS path each prints.
func ec2MetadataOpts() map[string][2]string {
	return ec2MetadataTable.get(func() map[string][2]string {
		return map[string][2]string{
			"-a": {"ami-id", "ami-id"}, "--ami-id": {"ami-id", "ami-id"},
			"-i": {"instance-id", "instance-id"}, "--instance-id": {"instance-id", "instance-id"},
			"-t": {"instance-type", "instance-type"}, "--instance-type": {"instance-type", "instance-type"},
			"-h": {"local-hostname", "local-hostname"}, "--local-hostname": {"local-hostname", "local-hostname"},
			"-o": {"local-ipv4", "local-ipv4"}, "--local-ipv4": {"local-ipv4", "local-ipv4"},
			"-z": {"placement", "placement/availability-zone"}, "--availability-zone": {"placement", "placement/availability-zone"},
			"-R": {"region", "placement/region"}, "--region": {"region", "placement/region"},
			"-l": {"instance-life-cycle", "instance-life-cycle"}, "--instance-life-cycle": {"instance-life-cycle", "instance-life-cycle"},
			"-m": {"mac", "mac"}, "--mac": {"mac", "mac"},
		}
	})
}

func toolEC2Metadata(t *toolCtx, args []string) error {
	if len(args) == 0 {
		return t.unsupported(args)
	}
	var b strings.Builder
	for _, a := range args {
		o, ok := ec2MetadataOpts()[a]
		if !ok {
			return t.unsupported(args)
		}
		v, ok := t.s.opts.Metadata("meta-data/" + o[1])
		if !ok {
			v = t.s.unknown(fmt.Sprintf("IMDS meta-data/%s (%s)", o[1], t.at))
		}
		fmt.Fprintf(&b, "%s: %s\n", o[0], v)
	}
	return t.write([]byte(b.String()))
}

// toolIMDS is the AL2023 image's imds helper: imds PATH.
func toolIMDS(t *toolCtx, args []string) error {
	if len(args) != 1 {
		return t.unsupported(args)
	}
	p := strings.TrimPrefix(strings.TrimPrefix(args[0], "/"), "latest/")
	v, ok := t.s.opts.Metadata(strings.TrimSuffix(p, "/"))
	if !ok {
		v = t.s.unknown(fmt.Sprintf("IMDS %s, which the simulated instance does not have (%s)", p, t.at))
	}
	return t.write([]byte(v))
}
