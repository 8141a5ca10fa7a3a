package flaghelp

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

func testFlags() *pflag.FlagSet {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.String("kubelet-version", "", "kubelet version such as 1.32.9 (default: /etc/eks/kubelet-version.txt, else `kubelet --version`)")
	fs.String("region", "us-west-2", "region")
	fs.Duration("imds-timeout", time.Minute, "deadline for reading the instance metadata")
	fs.Int("max-eni", 0, "use at most this many ENIs")
	fs.String("an-option-with-a-very-long-name-indeed", "", strings.TrimSpace(strings.Repeat("word ", 40)))
	fs.BoolP("help", "h", false, "print this help")
	SetValues(fs, "region", "us-west-2", "eu-west-1")
	return fs
}

// TestWriteTypesAndWidth checks the help block: the value's own type (not a
// back-quoted word of the usage), no [=true|false] for a bool, the default, and
// every line within Width.
func TestWriteTypesAndWidth(t *testing.T) {
	var b strings.Builder
	Write(&b, testFlags())
	out := b.String()
	for _, want := range []string{
		"      --kubelet-version string ",
		"else `kubelet --version`)\n",
		"      --region string ",
		"region (default us-west-2)\n",
		"      --imds-timeout duration ",
		"(default 1m0s)",
		"      --max-eni int ",
		"  -h, --help ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	// A left column too wide for the description column puts the description below,
	// aligned with the others.
	col := strings.Index(out, "region (default") - strings.LastIndex(out[:strings.Index(out, "region (default")], "\n") - 1
	if !strings.Contains(out, "      --an-option-with-a-very-long-name-indeed string\n"+strings.Repeat(" ", col)+"word word") {
		t.Errorf("the long flag's description is not below it at column %d:\n%s", col, out)
	}
	if strings.Contains(out, "[=") || strings.Contains(out, "(default 0)") {
		t.Errorf("help has pflag's [=true|false] or a zero default:\n%s", out)
	}
	for _, l := range strings.Split(out, "\n") {
		if len(l) > Width {
			t.Errorf("line of %d columns: %q", len(l), l)
		}
	}
}

func TestWrap(t *testing.T) {
	for _, tc := range []struct {
		text  string
		width int
		want  []string
	}{
		{"a b c", 3, []string{"a b", "c"}},
		{"a verylongword b", 4, []string{"a", "verylongword", "b"}},
		{"one\ntwo three", 20, []string{"one", "two three"}},
		{"", 10, []string{""}},
	} {
		if got := Wrap(tc.text, tc.width); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tc.text, tc.width, got, tc.want)
		}
	}
}
