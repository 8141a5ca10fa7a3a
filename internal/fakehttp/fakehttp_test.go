package fakehttp

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestStartServeClose(t *testing.T) {
	s, err := Start("fake test", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "hello "+r.URL.Path)
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
		t.Errorf("URL %q is not on 127.0.0.1", s.URL())
	}
	resp, err := http.Get(s.URL() + "/x")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello /x" {
		t.Errorf("answer %q", body)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := http.Get(s.URL() + "/x"); err == nil {
		t.Error("the server still answers after Close")
	}
}
