//go:build e2e

package e2e

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// checkIdentityRefused removes the node's mapping (the kubelet's line of the API
// server's token file: as when the node role's entry leaves aws-auth or the access
// entries) and restarts the API server: the kubelet must be refused (Unauthorized in
// its journal) and eksboot doctor must say so in its identity checks (exit 1).
func checkIdentityRefused(t *testing.T, b *box, kubeletToken string) {
	t.Helper()
	tokens, err := b.readRoot("etc/e2e/pki/tokens.csv")
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimSpace(tokens), "\n") {
		if !strings.HasPrefix(l, kubeletToken+",") {
			kept = append(kept, l)
		}
	}
	if len(kept) == len(strings.Split(strings.TrimSpace(tokens), "\n")) {
		t.Fatal("tokens.csv has no line for the kubelet's token")
	}
	b.write("etc/e2e/pki/tokens.csv", 0o600, strings.Join(kept, "\n")+"\n")
	since := time.Now()
	if out, err := b.exec("systemctl", "restart", "e2e-apiserver.service"); err != nil {
		t.Fatalf("restart the API server: %v %s", err, out)
	}
	deadline := time.Now().Add(2 * time.Minute)
	var api, journal, apiEv, journalEv, text string
	var derr error
	for time.Now().Before(deadline) {
		var r doctorReport
		r, text, derr = doctor(t, b)
		api, apiEv = r.check("identity.api")
		journal, journalEv = r.check("identity.kubelet-journal")
		if api == "FAIL" && journal == "FAIL" {
			break
		}
		time.Sleep(3 * time.Second)
	}
	t.Logf("eksboot doctor with the node's mapping removed:\n%s", text)
	if api != "FAIL" || !strings.Contains(apiEv, "401 Unauthorized") || derr == nil {
		t.Errorf("identity.api: %s %q (doctor: %v), want FAIL naming the refused token (401) and exit 1", api, apiEv, derr)
	}
	if journal != "FAIL" || !strings.Contains(journalEv, "Unauthorized lines from the kubelet") {
		t.Errorf("identity.kubelet-journal: %s %q, want FAIL counting the kubelet's Unauthorized lines", journal, journalEv)
	}
	var refused []string
	for _, l := range lines(b.journal("kubelet.service"), "Unauthorized") {
		if regexp.MustCompile(`\bUnauthorized\b`).MatchString(l) {
			refused = append(refused, l)
		}
	}
	if len(refused) == 0 {
		t.Errorf("the kubelet's journal since %s has no Unauthorized line: it was not refused", since.Format(time.RFC3339))
	} else {
		t.Logf("the kubelet is refused (%d lines), e.g. %s", len(refused), refused[len(refused)-1])
	}
	if strings.Contains(text, kubeletToken) {
		t.Error("doctor's output shows the kubelet's token")
	}
}
