package apierror

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

const token = "IQoJb3JpZ2luX2VjEJr//////////wEaCXVzLXdlc3QtMiJHMEUCIQD6v1Ee9K+mxXn0bZ3QUw9a8f7e6d5c4b3a2f1e0d9c8b7a6f5e4d3c2b1a0=="

// TestTextIsScrubbedBeforeItIsCut: a page that begins with a token, and a message
// long enough to be quoted short, keep no prefix of it.
func TestTextIsScrubbedBeforeItIsCut(t *testing.T) {
	se := NewStatusError("EC2", 502, []byte("  "+token+" <html>Bad Gateway</html>"))
	if strings.Contains(se.Error(), token[:12]) || !strings.HasPrefix(se.Excerpt, "(redacted) <html>") {
		t.Errorf("StatusError: %s", se)
	}
	ae := &APIError{Status: 400, Code: "AuthFailure", Message: "invalid token: " + token + strings.Repeat(" padding", 30)}
	if strings.Contains(ae.Error(), token[:12]) || !strings.Contains(ae.Error(), "invalid token: (redacted)") || strings.Contains(ae.ErrorMessage(), token[:12]) {
		t.Errorf("APIError: %s", ae)
	}
}

// TestReadAnswerStopsAtItsLimit: an answer past the limit is a *TooLargeError; one
// at the limit is read whole.
func TestReadAnswerStopsAtItsLimit(t *testing.T) {
	b, err := ReadAnswer(bytes.NewReader(make([]byte, 100)), 200, 100)
	if err != nil || len(b) != 100 {
		t.Errorf("ReadAnswer of 100 bytes: %d bytes, %v", len(b), err)
	}
	var tl *TooLargeError
	if _, err := ReadAnswer(bytes.NewReader(make([]byte, 101)), 200, 100); !errors.As(err, &tl) || err.Error() != "the answer (HTTP 200) is larger than 100 bytes" {
		t.Errorf("ReadAnswer of 101 bytes: %v", err)
	}
}
