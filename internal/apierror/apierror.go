// Package apierror is the error of an AWS API's answer, as ec2api (the EC2 Query
// protocol) and eksapi (EKS's REST-JSON protocol) decode it: the status, the
// service's error code and message, and the request ID when the answer gives one
// (APIError); an error status without a code (StatusError, a proxy's page); and the
// bounded read of an answer both clients make (ReadAnswer). It implements
// smithy.APIError, so the SDK's retry classification and callers that look for an
// AWS error code take it as they take the SDK's own.
//
// Every text of an answer it quotes is scrubbed first (scrub.Text): an endpoint or a
// proxy that reflects the request would put its credentials in the message.
package apierror

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/internal/scrub"
)

// APIError is an AWS API's error answer.
type APIError struct {
	// Status is the HTTP status code.
	Status int
	// Code is the service's error code (UnauthorizedOperation, AccessDeniedException,
	// ThrottlingException...).
	Code string
	// Message is the error message; it may be empty.
	Message string
	// RequestID is the answer's request ID; it may be empty.
	RequestID string
}

var _ smithy.APIError = (*APIError)(nil)

// Error is one short line: the code and message are a server's text, scrubbed of
// secrets, then quoted (quote.Name, quote.Value) when long or not plain.
func (e *APIError) Error() string {
	s := fmt.Sprintf("HTTP %d, %s", e.Status, quote.Name(scrub.Text(e.Code)))
	if msg := scrub.Text(e.Message); msg != "" {
		if len(msg) > 200 || strings.IndexFunc(msg, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }) >= 0 {
			msg = quote.Value(msg)
		}
		s += ": " + msg
	}
	if id := scrub.Text(e.RequestID); id != "" {
		s += " (request " + quote.Name(id) + ")"
	}
	return s
}

// ErrorCode implements smithy.APIError.
func (e *APIError) ErrorCode() string { return e.Code }

// ErrorMessage implements smithy.APIError; it is scrubbed of secrets.
func (e *APIError) ErrorMessage() string { return scrub.Text(e.Message) }

// ErrorFault implements smithy.APIError: 5xx answers are the server's fault.
func (e *APIError) ErrorFault() smithy.ErrorFault {
	if e.Status >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// HTTPStatusCode returns the HTTP status of the answer.
func (e *APIError) HTTPStatusCode() int { return e.Status }

// StatusError is an answer with an error status that is not the service's error (no
// error code: a proxy's or a load balancer's page, for example).
type StatusError struct {
	// Service names the API ("EC2", "EKS").
	Service string
	// Status is the HTTP status code.
	Status int
	// Excerpt is the start of the body, scrubbed of secrets (NewStatusError).
	Excerpt string
}

// excerptBytes is how much of a page StatusError keeps.
const excerptBytes = 120

// scrubbedBytes is how much of a page is scrubbed before it is cut to an excerpt:
// enough that a token that begins within the excerpt is found whole.
const scrubbedBytes = 4096

// NewStatusError is the StatusError of an answer of service with status and body:
// the start of the body, scrubbed before it is cut, so that no prefix of a secret is
// kept.
func NewStatusError(service string, status int, body []byte) *StatusError {
	text := bytes.TrimSpace(body)
	text = text[:min(len(text), scrubbedBytes)]
	excerpt := scrub.Text(string(text))
	if len(excerpt) > excerptBytes {
		cut := excerptBytes
		for cut > 0 && !utf8.RuneStart(excerpt[cut]) {
			cut--
		}
		excerpt = excerpt[:cut] + "..."
	}
	return &StatusError{Service: service, Status: status, Excerpt: excerpt}
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d without an %s error code: %s", e.Status, e.Service, quote.Value(e.Excerpt))
}

// HTTPStatusCode returns the HTTP status of the answer.
func (e *StatusError) HTTPStatusCode() int { return e.Status }

// ReadAnswer reads an answer's body with status through limit: an answer larger
// than limit stops being read at limit+1 bytes, so it costs no more memory than
// that, and is a *TooLargeError; an error of the read itself is wrapped as it is.
func ReadAnswer(body io.Reader, status int, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer (HTTP %d): %w", status, err)
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Status: status, Limit: limit}
	}
	return b, nil
}

// TooLargeError is an answer larger than ReadAnswer's limit.
type TooLargeError struct {
	Status int
	Limit  int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("the answer (HTTP %d) is larger than %d bytes", e.Status, e.Limit)
}
