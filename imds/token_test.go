package imds

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/eksboot/eksboot/imds/imdstest"
)

// TestTokenIsRenewedWhenItRunsOut: against a service whose tokens live 1 s (and
// say so in their TTL header, whatever was asked), a client that used a token and
// comes back after it ran out asks for a new one before its GET: it never sends
// the dead one (no 401), and it keeps the TTL the service gave, not the 300 s it
// asked for.
func TestTokenIsRenewedWhenItRunsOut(t *testing.T) {
	srv, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	srv.SetTokenTTL(time.Second)
	c := newClient(Options{Endpoint: srv.URL()})
	t.Cleanup(c.close)
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.get(ctx, PathInstanceID); err != nil {
			t.Fatalf("GET %d: %v", i+1, err)
		}
		if left := time.Until(c.expires); left > time.Second {
			t.Fatalf("the token is kept for %v, more than the 1 s the service gave", left)
		}
		if i == 0 {
			time.Sleep(time.Until(c.expires) + 200*time.Millisecond) // past the token's life
		}
	}
	var got []string
	for _, r := range srv.Requests() {
		got = append(got, r.Method+" "+http.StatusText(r.Status))
	}
	want := []string{"PUT OK", "GET OK", "PUT OK", "GET OK"}
	if len(got) != len(want) {
		t.Fatalf("requests %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("requests %q, want %q", got, want)
		}
	}
}
