package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// gen composes a script from the constructs render claims, ending in a bootstrap.sh
// call whose words use what it made.
type gen struct {
	r    *rand.Rand
	vars []string
	arrs []string
	b    strings.Builder
	n    int
}

var genWords = []string{"alpha", "Beta", "gamma-1", "d=4", "e.f", "x_y", "MiXeD", "node", "a,b", "k=v", "10", "0", "-x", "--flag", "path/to", "ü", "tab\there", "two words", "", "*", "a'b", `a"b`, `a\b`, "$HOME", "new\nline"}

func (g *gen) word() string { return genWords[g.r.IntN(len(genWords))] }

func (g *gen) name() string {
	g.n++
	return fmt.Sprintf("v%d", g.n)
}

// quoted is a word in one of bash's quoting styles.
func (g *gen) quoted(w string) string {
	switch g.r.IntN(5) {
	case 0:
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	case 1:
		r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
		return `"` + r.Replace(w) + `"`
	case 2:
		var b strings.Builder
		b.WriteString("$'")
		for i := 0; i < len(w); i++ {
			switch c := w[i]; {
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\'' || c == '\\':
				b.WriteString(`\` + string(c))
			case c >= 0x80:
				fmt.Fprintf(&b, `\x%02x`, c)
			default:
				b.WriteByte(c)
			}
		}
		return b.String() + "'"
	case 3:
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$*`,=") {
			return w
		}
		return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	default:
		return `"pre-"'` + strings.ReplaceAll(w, "'", `'\''`) + `'"-post"`
	}
}

func (g *gen) ref() string {
	if len(g.vars) == 0 {
		return `"lit"`
	}
	v := g.vars[g.r.IntN(len(g.vars))]
	switch g.r.IntN(14) {
	case 0:
		return `"${` + v + `:-def}"`
	case 1:
		return `"${` + v + `#?}"`
	case 2:
		return `"${` + v + `%?}"`
	case 3:
		return `"${` + v + `//a/_}"`
	case 4:
		return `"${#` + v + `}"`
	case 5:
		return `"${` + v + `^^}"`
	case 6:
		return `"${` + v + `,,}"`
	case 7:
		return `"${` + v + `:1:3}"`
	case 8:
		return `"${` + v + `:+set}"`
	case 9:
		return `"${` + v + `^}${` + v + `,}"`
	case 10:
		return `"$(printf '%s' "$` + v + `" | tr 'a-z' 'A-Z')"`
	case 11:
		return `"$(echo "$` + v + `" | cut -c1-3)"`
	case 12:
		return `"$(printf '%s\n' "$` + v + `" | sed 's/[aeiou]/0/g')"`
	default:
		return `"$` + v + `"`
	}
}

func (g *gen) stmt(depth int) {
	switch k := g.r.IntN(16); {
	case k < 3:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=%s\n", v, g.quoted(g.word()))
		g.vars = append(g.vars, v)
	case k == 3:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=%s%s\n", v, g.ref(), g.quoted(g.word()))
		g.vars = append(g.vars, v)
	case k == 4:
		a := g.name()
		fmt.Fprintf(&g.b, "%s=(%s %s %s)\n%s+=(%s)\n", a, g.quoted(g.word()), g.quoted(g.word()), g.ref(), a, g.quoted(g.word()))
		g.arrs = append(g.arrs, a)
	case k == 5 && depth < 2:
		f := g.name()
		fmt.Fprintf(&g.b, "%s() {\n  local l=\"$1\"\n", f)
		g.stmt(depth + 1)
		fmt.Fprintf(&g.b, "  printf '%%s|' \"$l\" \"$#\"\n}\n")
		v := g.name()
		fmt.Fprintf(&g.b, "%s=$(%s %s %s)\n", v, f, g.ref(), g.quoted(g.word()))
		g.vars = append(g.vars, v)
	case k == 6 && depth < 2:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=\nfor i in %s %s \"%s\"; do\n  %s=\"$%s[$i]\"\n", v, g.quoted(g.word()), g.quoted(g.word()), "x y", v, v)
		g.stmt(depth + 1)
		fmt.Fprintf(&g.b, "done\n")
		g.vars = append(g.vars, v)
	case k == 7:
		v := g.name()
		fmt.Fprintf(&g.b, "n=0; %s=\nwhile [ \"$n\" -lt %d ]; do n=$((n+1)); %s=\"$%s$n,\"; done\n", v, g.r.IntN(4), v, v)
		g.vars = append(g.vars, v)
	case k == 8 && depth < 2:
		v := g.name()
		fmt.Fprintf(&g.b, "if [[ %s == *a* ]]; then\n  %s=yes\nelif [ -n %s ]; then\n  %s=nonempty\nelse\n  %s=no\nfi\n", g.ref(), v, g.ref(), v, v)
		g.vars = append(g.vars, v)
	case k == 9:
		v := g.name()
		fmt.Fprintf(&g.b, "case %s in\n  *e*) %s=has-e ;;\n  [A-Z]*) %s=upper ;;\n  '') %s=empty ;;\n  *) %s=other ;;\nesac\n", g.ref(), v, v, v, v)
		g.vars = append(g.vars, v)
	case k == 10:
		v := g.name()
		if g.r.IntN(2) == 0 {
			fmt.Fprintf(&g.b, "%s=$(cat <<EOF\nline ${%s-none} $((2+3))\n  %s\nEOF\n)\n", v, g.pick(), strings.ReplaceAll(g.word(), "$", `\$`))
		} else {
			fmt.Fprintf(&g.b, "%s=$(cat <<'EOF'\nliteral $x ${y} $(z)\nEOF\n)\n", v)
		}
		g.vars = append(g.vars, v)
	case k == 11:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=$(printf '%%s\\n' %s %s %s | sort | head -n 2 | tr '\\n' ,)\n", v, g.quoted(g.word()), g.quoted(g.word()), g.ref())
		g.vars = append(g.vars, v)
	case k == 12:
		v := g.name()
		fmt.Fprintf(&g.b, "printf -v %s '%%s=%%s' %s %s\n", v, g.quoted(g.word()), g.ref())
		g.vars = append(g.vars, v)
	case k == 13:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=$((%d * %d + ${#%s}))\n", v, g.r.IntN(100), g.r.IntN(100), g.pick())
		g.vars = append(g.vars, v)
	case k == 14:
		v := g.name()
		fmt.Fprintf(&g.b, "read -r %s rest <<< %s\n", v, g.ref())
		g.vars = append(g.vars, v)
	default:
		v := g.name()
		fmt.Fprintf(&g.b, "%s=$(echo %s | grep -c a || true)\n", v, g.ref())
		g.vars = append(g.vars, v)
	}
}

func (g *gen) pick() string {
	if len(g.vars) == 0 {
		return "HOME"
	}
	return g.vars[g.r.IntN(len(g.vars))]
}

// script is the seed's script.
func genScript(seed uint64) string {
	g := &gen{r: rand.New(rand.NewPCG(seed, 24))}
	for range 2 + g.r.IntN(8) {
		g.stmt(0)
	}
	g.b.WriteString("/etc/eks/bootstrap.sh c")
	for range 1 + g.r.IntN(5) {
		g.b.WriteString(" " + g.ref())
	}
	for _, a := range g.arrs {
		fmt.Fprintf(&g.b, ` "${%s[@]}" ${#%s[@]} "${%s[*]}"`, a, a, a)
	}
	g.b.WriteString("\n")
	return g.b.String()
}

// TestEvaluateAgreesWithBashOnGeneratedScripts: thousands of generated scripts
// (EKSBOOT_DIFF_CASES, 2000; seeds from EKSBOOT_DIFF_SEED, 1) give bootstrap.sh the
// same words under real bash and in the simulation, or are refused by name.
func TestEvaluateAgreesWithBashOnGeneratedScripts(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		if os.Getenv("EKSBOOT_REQUIRE_TOOLS") != "" {
			t.Fatal("bash is required")
		}
		t.Skip("no bash")
	}
	cases, base := 2000, uint64(1)
	if v, err := strconv.Atoi(os.Getenv("EKSBOOT_DIFF_CASES")); err == nil {
		cases = v
	}
	if v, err := strconv.ParseUint(os.Getenv("EKSBOOT_DIFF_SEED"), 10, 64); err == nil {
		base = v
	}
	start := time.Now()
	dir := t.TempDir()
	stub := filepath.Join(dir, "bootstrap-stub")
	must(t, os.WriteFile(stub, []byte("#!"+bash+"\nprintf '\\001CALL\\000' >> \"$REC\"\nprintf '%s\\000' \"$@\" >> \"$REC\"\n"), 0o755))
	// two drivers (a 2-core machine), each running its half of the scripts
	var drivers [2]strings.Builder
	for i := range cases {
		driver := &drivers[i%2]
		seed := base + uint64(i)
		src := genScript(seed)
		d := filepath.Join(dir, strconv.Itoa(i))
		must(t, os.Mkdir(d, 0o755))
		must(t, os.WriteFile(filepath.Join(d, "script"), []byte(strings.ReplaceAll(src, BootstrapPath, stub)), 0o644))
		fmt.Fprintf(driver, "(cd %s && REC=%s/calls %s ./script >/dev/null 2>&1)\n", d, d, bash)
	}
	errs := make(chan error, len(drivers))
	for i := range drivers {
		driver := filepath.Join(dir, fmt.Sprintf("driver-%d", i))
		must(t, os.WriteFile(driver, []byte(drivers[i].String()), 0o644))
		argv := []string{bash, driver}
		if os.Geteuid() == 0 {
			if unshare, err := exec.LookPath("unshare"); err == nil {
				argv = append([]string{unshare, "-n", "--"}, argv...)
			}
		}
		go func() {
			cmd := exec.Command(argv[0], argv[1:]...)
			cmd.Env = bootEnv
			out, err := cmd.CombinedOutput()
			if err != nil {
				err = fmt.Errorf("bash: %w\n%s", err, out)
			}
			errs <- err
		}()
	}
	for range drivers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	bashTime := time.Since(start)
	agreed, refused := 0, 0
	for i := range cases {
		seed := base + uint64(i)
		src := genScript(seed)
		b, err := os.ReadFile(filepath.Join(dir, strconv.Itoa(i), "calls"))
		if err != nil {
			t.Errorf("seed %d: bash made no call:\n%s", seed, src)
			continue
		}
		var want [][]string
		for _, c := range strings.Split(string(b), "\x01CALL\x00")[1:] {
			want = append(want, strings.Split(strings.TrimSuffix(c, "\x00"), "\x00"))
		}
		ev, err := Evaluate(context.Background(), script(src), Options{})
		var ns *NotSimulatedError
		if errors.As(err, &ns) {
			refused++
			continue
		}
		if err != nil {
			t.Errorf("seed %d: %v\n%s", seed, err, src)
			continue
		}
		var got [][]string
		for _, c := range ev.Calls {
			got = append(got, c.Args)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d (EKSBOOT_DIFF_SEED=%d EKSBOOT_DIFF_CASES=1): render captured\n%q\nbash passed\n%q\nscript:\n%s", seed, seed, got, want, src)
			continue
		}
		agreed++
	}
	t.Logf("%d generated scripts (seeds %d-%d): %d agree with bash, %d refused by name; bash %s, all %s", cases, base, base+uint64(cases)-1, agreed, refused, bashTime.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}
