// Package apierror is the error of an AWS API's answer, as ec2api (the EC2 Query
// protocol) and eksapi (EKS's REST-JSON protocol) decode it: the status, the
// service's error code and message, and the request ID when the answer gives one.
// It implements smithy.APIError, so the SDK's retry classification and callers
// that look for an AWS error code take it as they take the SDK's own.
package apierror

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/smithy-go"

	"github.com/eksboot/eksboot/internal/quote"
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

// Error is one short line: the code and message are a server's text, quoted
// (quote.Name, quote.Value) when long or not plain.
func (e *APIError) Error() string {
	s := fmt.Sprintf("HTTP %d, %s", e.Status, quote.Name(e.Code))
	if msg := e.Message; msg != "" {
		if len(msg) > 200 || strings.IndexFunc(msg, func(r rune) bool { return r < ' ' || r == 0x7f || r == utf8.RuneError }) >= 0 {
			msg = quote.Value(msg)
		}
		s += ": " + msg
	}
	if e.RequestID != "" {
		s += " (request " + quote.Name(e.RequestID) + ")"
	}
	return s
}

// ErrorCode implements smithy.APIError.
func (e *APIError) ErrorCode() string { return e.Code }

// ErrorMessage implements smithy.APIError.
func (e *APIError) ErrorMessage() string { return e.Message }

// ErrorFault implements smithy.APIError: 5xx answers are the server's fault.
func (e *APIError) ErrorFault() smithy.ErrorFault {
	if e.Status >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// HTTPStatusCode returns the HTTP status of the answer.
func (e *APIError) HTTPStatusCode() int { return e.Status }
