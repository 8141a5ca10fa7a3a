package userdata

import (
	"fmt"
	"path"
	"regexp"
	"strings"
	"sync"
)

// Call is a bootstrap.sh invocation found in a shell script, parsed, never run.
type Call struct {
	// Part is the script's part; Line the line (from 1) where the command starts.
	Part Part
	Line int
	// Args are the words after the command name, with quotes removed and the
	// variables assigned literally earlier in the script substituted.
	Args []string
	// Env are the variables the script exported with literal values (bootstrap.sh's
	// environment fallbacks).
	Env map[string]string
}

// UnresolvedError says that a bootstrap.sh argument depends on something known only
// when the script runs (a variable set at boot, a command substitution).
type UnresolvedError struct {
	Where  string // "part 3 (text/x-shellscript) line 9"
	Arg    int    // argument number, from 1
	Reason string
}

func (e *UnresolvedError) Error() string {
	return fmt.Sprintf("%s: bootstrap.sh argument %d depends on %s, known only when the script runs (eksboot parses scripts, it does not run them)", e.Where, e.Arg, e.Reason)
}

// maxPodsSed is eksctl's maxPodsPerNode hook: sed on bootstrap.sh so that it appends
// flags to KUBELET_EXTRA_ARGS.
var maxPodsSed = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`sed\s+-i\s+'s/KUBELET_EXTRA_ARGS=\$2/KUBELET_EXTRA_ARGS="\$2 ([^"'/]*)"/'\s+/etc/eks/bootstrap\.sh`)
})

// FindBootstrapCall returns the first bootstrap.sh command of the shell-script parts
// (nil when there is none). The words are split as a shell would, with single and
// double quotes, backslashes and backslash-newline continuations; CRLF line ends are
// taken as LF. Values from variables assigned literally earlier in the same script
// are substituted; a word that depends on anything else (a variable set elsewhere,
// a command substitution) is an *UnresolvedError. eksctl's sed hook that appends
// flags to KUBELET_EXTRA_ARGS in bootstrap.sh is applied to --kubelet-extra-args.
func FindBootstrapCall(parts []Part) (*Call, error) {
	var extra []string
	for _, p := range parts {
		if !isScript(p) {
			continue
		}
		text := strings.ReplaceAll(string(p.Body), "\r\n", "\n")
		for _, m := range maxPodsSed().FindAllStringSubmatch(text, -1) {
			extra = append(extra, m[1])
		}
		call, err := findCall(p, text)
		if err != nil || call == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		if len(extra) > 0 {
			applyExtra(call, strings.Join(extra, " "))
		}
		return call, nil
	}
	return nil, nil
}

func isScript(p Part) bool {
	switch p.ContentType {
	case TypeShellScript, TypeBoothook:
		return true
	case TypePlain:
		return strings.HasPrefix(string(p.Body), "#!")
	}
	return false
}

// applyExtra appends s to the value of --kubelet-extra-args, as the sed-edited
// bootstrap.sh does (KUBELET_EXTRA_ARGS="$2 <s>").
func applyExtra(c *Call, s string) {
	for i, a := range c.Args {
		switch {
		case a == "--kubelet-extra-args" && i+1 < len(c.Args):
			c.Args[i+1] += " " + s
			return
		case strings.HasPrefix(a, "--kubelet-extra-args="):
			c.Args[i] += " " + s
			return
		}
	}
}

// findCall scans one script for the bootstrap.sh command.
func findCall(p Part, text string) (*Call, error) {
	vars := map[string]string{}
	exported := map[string]string{}
	lx := &lexer{src: text, line: 1}
	for {
		cmd, err := lx.command()
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %w", p.Name(), lx.line, err)
		}
		if cmd == nil {
			return nil, nil
		}
		words := cmd.words
		export := len(words) > 0 && words[0].literal() && words[0].text() == "export"
		if export {
			words = words[1:]
		}
		// Leading NAME=value words are assignments.
		i := 0
		for ; i < len(words); i++ {
			name, value, ok := words[i].assignment()
			if !ok {
				break
			}
			v, reason := value.expandString(vars)
			if reason != "" {
				delete(vars, name)
				continue
			}
			vars[name] = v
			if export {
				exported[name] = v
			}
		}
		if i >= len(words) || !words[i].literal() {
			continue
		}
		if name := words[i].text(); path.Base(name) != "bootstrap.sh" {
			continue
		}
		call := &Call{Part: p, Line: cmd.line, Env: exported}
		where := fmt.Sprintf("%s line %d", p.Name(), cmd.line)
		for n, w := range words[i+1:] {
			v, reason := w.expand(vars)
			if reason != "" {
				return nil, &UnresolvedError{Where: where, Arg: n + 1, Reason: reason}
			}
			call.Args = append(call.Args, v...)
		}
		return call, nil
	}
}
