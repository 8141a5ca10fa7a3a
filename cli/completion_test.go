package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eksboot/eksboot/internal/testtools"
)

// completionScript writes `eksboot completion SHELL` to a file and returns its path.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot", "completion", shell}, &stdout, &stderr); code != 0 {
		t.Fatalf("completion %s: exit %d: %s", shell, code, stderr.String())
	}
	p := filepath.Join(t.TempDir(), "eksboot."+shell)
	if err := os.WriteFile(p, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// completionCases are command lines (the last word being completed) and what every
// shell must offer for them.
var completionCases = []struct {
	words []string
	want  []string
}{
	{[]string{"ma"}, []string{"man", "max-pods"}},
	{[]string{"bootstrap", "--ip-family", ""}, []string{"ipv4", "ipv6"}},
	{[]string{"bootstrap", "--max-pods-mode", ""}, []string{"eni-max-pods", "ipv6", "prefix-delegation", "secondary-ip"}},
	{[]string{"bootstrap", "--image-profile", ""}, []string{"al2", "al2023"}},
	{[]string{"init", "--image-profile", "al2"}, []string{"al2", "al2023"}},
	{[]string{"init", "--phase", ""}, []string{"all", "config", "run"}},
	{[]string{"init", "--log-format", "j"}, []string{"journal", "json"}},
	{[]string{"max-pods", "--output", ""}, []string{"json", "text"}},
	{[]string{"doctor", "--output", ""}, []string{"json", "text"}},
	{[]string{"render", "--image-profile", ""}, []string{"al2", "al2023"}},
	{[]string{"bootstrap", "--max-pods-m"}, []string{"--max-pods-max-eni", "--max-pods-mode"}},
	{[]string{"completion", ""}, []string{"bash", "fish", "zsh"}},
	{[]string{"help", "b"}, []string{"bootstrap"}},
}

// TestBashCompletion runs the bash script's function as bash's completion does.
func TestBashCompletion(t *testing.T) {
	script := completionScript(t, "bash")
	for _, tc := range completionCases {
		words := append([]string{"eksboot"}, tc.words...)
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+w+"'")
		}
		prog := "source " + script + "; COMP_WORDS=(" + strings.Join(quoted, " ") + "); COMP_CWORD=" + itoa(len(words)-1) +
			`; _eksboot; printf '%s\n' "${COMPREPLY[@]}"`
		out, err := exec.Command("bash", "--norc", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, out)
		}
		checkOffered(t, "bash", tc.words, strings.Fields(string(out)), tc.want)
	}
	// --flag=value: bash splits the word at "=".
	out, err := exec.Command("bash", "--norc", "-c", "source "+script+`; COMP_WORDS=(eksboot bootstrap --ip-family = ''); COMP_CWORD=4; _eksboot; printf '%s\n' "${COMPREPLY[@]}"`).CombinedOutput()
	if err != nil {
		t.Fatal(err)
	}
	checkOffered(t, "bash", []string{"bootstrap", "--ip-family="}, strings.Fields(string(out)), []string{"ipv4", "ipv6"})
}

// TestFishCompletion asks fish itself (complete -C).
func TestFishCompletion(t *testing.T) {
	testtools.Require(t, "fish")
	script := completionScript(t, "fish")
	for _, tc := range completionCases {
		line := "eksboot " + strings.Join(tc.words, " ")
		out, err := exec.Command("fish", "--no-config", "-c", "source "+script+"; complete -C "+fishQuote(line)).CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var got []string
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			if l != "" {
				got = append(got, strings.SplitN(l, "\t", 2)[0])
			}
		}
		checkOffered(t, "fish", tc.words, got, tc.want)
	}
}

// TestZshCompletion types each case into an interactive zsh on a pseudo-terminal
// (zsh's zpty) and presses Tab twice: the completion list must show what is wanted.
func TestZshCompletion(t *testing.T) {
	testtools.Require(t, "zsh")
	script := completionScript(t, "zsh")
	for _, tc := range completionCases {
		line := "eksboot " + strings.Join(tc.words, " ")
		// The completed or listed words appear on the terminal; each must be there.
		var checks []string
		for _, w := range tc.want {
			checks = append(checks, `[[ $out == *`+zshGlobQuote(w)+`* ]] || { missing+=(`+zshQuoteWord(w)+`); }`)
		}
		prog := `zmodload zsh/zpty
zpty z 'zsh -f -i'
zpty -w z 'PS1="> "; autoload -Uz compinit; compinit -u -D; source ` + script + `; eksboot() { :; }; LISTMAX=1000; print READY'
zpty -r -m z out '*READY*' || exit 2
out=
zpty -w -n z ` + zshQuoteWord(line) + `$'\t\t'
# Read the screen until every wanted word is on it (at most 20 s: a loaded machine).
for i in {1..100}; do
	sleep 0.2
	while zpty -r -t z chunk; do out+=$chunk; done
	missing=()
	` + strings.Join(checks, "\n\t") + `
	(( ${#missing} == 0 )) && break
done
zpty -d z
(( ${#missing} == 0 )) && exit 0
print -r -- "MISSING: $missing"
print -r -- "SCREEN: $out"
exit 1
`
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		out, err := exec.CommandContext(ctx, "zsh", "-f", "-c", prog).CombinedOutput()
		cancel()
		if err != nil {
			t.Errorf("zsh: %q: %v\n%s", line, err, out)
		}
	}
}

func zshQuoteWord(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func zshGlobQuote(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]<>()|^#~\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkOffered compares the offered words with want, as sets.
func checkOffered(t *testing.T, shell string, words, got, want []string) {
	t.Helper()
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("%s: eksboot %s<TAB> offers %q, want %q", shell, strings.Join(words, " "), got, want)
	}
}

func itoa(n int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+n))) }
