package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eksboot/eksboot/internal/testtools"
)

// TestManPage: eksboot(8) has every command and every flag of the help, and man(1)
// formats it without a warning.
func TestManPage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"eksboot", "man"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	page := stdout.String()
	if !strings.HasPrefix(page, ".TH EKSBOOT 8 ") {
		t.Fatalf("not a section 8 page:\n%.200s", page)
	}
	for _, c := range commands() {
		if !strings.Contains(page, `.SS "eksboot `+roff(c.name)) {
			t.Errorf("no section for %s", c.name)
		}
		_, flags, err := c.helpOf("eksboot " + c.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range flags {
			if !strings.Contains(page, `\fB\-\-`+roff(f.Name)+`\fR`) {
				t.Errorf("%s: no --%s", c.name, f.Name)
			}
		}
	}
	if !strings.Contains(page, "One of: ipv4, ipv6.") {
		t.Errorf("--ip-family's values are not listed")
	}
	testtools.Require(t, "man")
	p := filepath.Join(t.TempDir(), "eksboot.8")
	if err := os.WriteFile(p, stdout.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("man", "--warnings", "-E", "UTF-8", "-l", p)
	cmd.Env = append(os.Environ(), "MANWIDTH=100", "MANPAGER=cat", "PAGER=cat")
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Run(); err != nil || errs.Len() > 0 {
		t.Fatalf("man -l: %v\n%s", err, errs.String())
	}
	for _, want := range []string{"--ip-family string", "eksboot bootstrap [options] CLUSTER_NAME", "EXIT STATUS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("formatted page lacks %q", want)
		}
	}
}
