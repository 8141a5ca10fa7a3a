package main

import (
	"os"
	"strings"
	"testing"
)

// TestNonPrintableExtraArgsAskNothing: a --kubelet-extra-args with a C1 control
// (U+0085), a byte that is not UTF-8 (\xff) or another non-printable character exits
// 2 naming the flag, before any IMDS request, and writes nothing.
func TestNonPrintableExtraArgsAskNothing(t *testing.T) {
	for name, args := range map[string]string{
		"NEL":              "--v=2\u0085--node-labels=a=b",
		"byte 0xff":        "--node-labels=a=\xff",
		"C1 CSI":           "--v=2 \u009b31m",
		"zero-width space": "--v=2\u200b",
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			c, fakes := startFakes(t, "01-m5large-usw2-vpc192")
			a := append(append([]string{"bootstrap"}, c.Args...), "--root", root, "--no-restart",
				"--kubelet-version", c.KubeletVersion, "--imds-endpoint", fakes.IMDS.URL(), "--kubelet-extra-args", args)
			code, _, stderr := run(t, fakes.Env(), "", a...)
			if code != 2 || !strings.Contains(stderr, "--kubelet-extra-args: ") {
				t.Errorf("exit %d, stderr %q; want exit 2 naming --kubelet-extra-args", code, stderr)
			}
			if n := len(fakes.IMDS.Requests()); n != 0 {
				t.Errorf("%d IMDS requests, want none", n)
			}
			if entries, _ := os.ReadDir(root); len(entries) != 0 {
				t.Errorf("wrote into the root: %d entries", len(entries))
			}
		})
	}
}
