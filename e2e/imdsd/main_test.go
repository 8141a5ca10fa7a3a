package main

import (
	"io"
	"net/http"
	"testing"

	"github.com/eksboot/eksboot/imds/imdstest"
	"github.com/eksboot/eksboot/internal/fakehttp"
)

// TestDatedPathsAreLatest asks as cloud-init does (a dated API version, no token:
// IMDSv1) and as eksboot does (latest, with a token), and gets the same facts.
func TestDatedPathsAreLatest(t *testing.T) {
	fake, err := imdstest.NewServer(imdstest.DefaultInstance())
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	fake.SetIMDSv1(true)
	srv, err := fakehttp.Start("imdsd-test", latest(fake))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, path := range []string{"/2021-03-23/meta-data/instance-id", "/2009-04-04/meta-data/instance-id", "/latest/meta-data/instance-id"} {
		resp, err := http.Get(srv.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != "i-0123456789abcdef0" {
			t.Errorf("GET %s: %d %q, want 200 i-0123456789abcdef0", path, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(srv.URL() + "/2021-03-23/meta-data/no-such-path")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("GET an unknown dated path: %d, want 404", resp.StatusCode)
	}
}
