// Package scrub takes secrets out of text that came from outside eksboot (an AWS
// API's or IMDS's answer, a proxy's page, a credential plugin's output) before
// eksboot logs, prints or records it. An endpoint, a proxy or a fake that reflects
// the request puts its credentials in its answer: an EC2 error message quoted "invalid
// token: <the session token>", a 502 page began with it, a DescribeCluster 403 held the
// secret key. Every client quotes a server's text through Text; doctor adds the
// secrets it meets to a Secrets of its own.
//
// Two rules, both applied by Text:
//
//   - the process's own credentials (Process): the access key ID, secret access key
//     and session token of the environment and of every credential the provider
//     retrieves (awsconf adds them), and the IMDS session tokens (imds adds them),
//     wherever they appear;
//   - token-shaped text, known or not: the values of credential headers and query
//     parameters (Authorization, X-Amz-Security-Token, X-Amz-Signature,
//     X-Amz-Credential, X-aws-ec2-metadata-token), AWS access key IDs, EKS bearer
//     tokens (k8s-aws-v1.…), and runs of 32 or more base64 characters that mix upper
//     case, lower case and digits, or of 32 or more hex digits.
//
// Each is replaced by Redacted. Text is applied before a value is cut short for a
// message, so that no prefix of a secret survives the cut.
package scrub

import (
	"strings"
	"sync"

	"github.com/eksboot/eksboot/internal/lazy"
)

// Redacted replaces each secret removed.
const Redacted = "(redacted)"

// minSecret is the shortest value Secrets keeps: shorter ones are no credential, and
// replacing them would take words out of every message.
const minSecret = 8

// Secrets is a set of secret values to take out of text. The zero value is empty and
// ready; it is safe for concurrent use.
type Secrets struct {
	mu   sync.RWMutex
	list []string
}

// Add adds each value of 8 bytes or more.
func (s *Secrets) Add(values ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if len(v) >= minSecret && !contains(s.list, v) {
			s.list = append(s.list, v)
		}
	}
}

// Remove replaces every value of s in text with Redacted, the longest first.
func (s *Secrets) Remove(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, v := range s.list {
		if strings.Contains(text, v) {
			return strings.NewReplacer(s.pairs()...).Replace(text)
		}
	}
	return text
}

// pairs are the old, new pairs of a strings.Replacer, longer values first (one that
// contains another is replaced whole). The caller holds s.mu.
func (s *Secrets) pairs() []string {
	sorted := append([]string(nil), s.list...)
	for i := 1; i < len(sorted); i++ {
		for j := i; j > 0 && len(sorted[j]) > len(sorted[j-1]); j-- {
			sorted[j], sorted[j-1] = sorted[j-1], sorted[j]
		}
	}
	out := make([]string, 0, 2*len(sorted))
	for _, v := range sorted {
		out = append(out, v, Redacted)
	}
	return out
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// Process holds this process's own credentials and IMDS session tokens.
var Process Secrets

// Text returns s, a server's text, without the process's credentials and without
// token-shaped text (see the package comment).
func Text(s string) string { return Tokens(Process.Remove(s)) }

// The shapes of a token.
var (
	// credentialParam is a credential header or parameter and its value (group 1 the
	// name and separator, group 2 the value): `X-Amz-Security-Token: v`,
	// `X-Amz-Signature=v`, `"SecretAccessKey": "v"`, `Authorization: AWS4-HMAC-SHA256
	// v`, `Bearer v`.
	credentialParam = lazy.Regexp{Expr: `(?i)((?:x-amz-security-token|x-amz-signature|x-amz-credential|x-aws-ec2-metadata-token|authorization|aws_session_token|aws_secret_access_key|sessiontoken|secretaccesskey|signature|credential)["']?\s*[:=]\s*["']?(?:(?:bearer|basic|aws4-hmac-sha256)\s+)?|\bbearer\s+)([^\s"'&,;<>]+)`}
	// accessKeyID is an AWS access key ID (a user's AKIA, a session's ASIA, ...).
	accessKeyID = lazy.Regexp{Expr: `\b(?:AKIA|ASIA|AIDA|AROA|AGPA|ANPA|ANVA|AIPA|APKA|ABIA|ACCA)[A-Z0-9]{16}\b`}
	// eksToken is an EKS bearer token (aws-iam-authenticator's and `aws eks
	// get-token`'s: a presigned STS URL, base64url).
	eksToken = lazy.Regexp{Expr: `k8s-aws-v1\.[A-Za-z0-9_=-]+`}
	// longRun is a run of base64 (and base64url) characters long enough to be a key
	// or a token; tokenLike decides.
	longRun = lazy.Regexp{Expr: `[A-Za-z0-9+/=_-]{32,}`}
)

// Tokens replaces token-shaped text in s with Redacted (see the package comment).
func Tokens(s string) string {
	s = credentialParam.Get().ReplaceAllString(s, "${1}"+Redacted)
	s = eksToken.Get().ReplaceAllString(s, Redacted)
	s = accessKeyID.Get().ReplaceAllString(s, Redacted)
	return longRun.Get().ReplaceAllStringFunc(s, func(run string) string {
		if tokenLike(run) {
			return Redacted
		}
		return run
	})
}

// tokenLike reports whether run, 32 or more base64 characters, is a secret's shape:
// hex digits only, or upper case, lower case and digits together (words, names and
// paths of eksboot's messages have no such runs: a '.' or a ':' ends them).
func tokenLike(run string) bool {
	var upper, lower, digit bool
	hex := true
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case c >= 'A' && c <= 'Z':
			upper = true
			hex = hex && c <= 'F'
		case c >= 'a' && c <= 'z':
			lower = true
			hex = hex && c <= 'f'
		case c >= '0' && c <= '9':
			digit = true
		default:
			hex = false
		}
	}
	return hex || (upper && lower && digit)
}

// Err returns err with its text scrubbed (Text), for a client's callers: what wraps a
// server's text (a reader's error naming an element, a transport's) is scrubbed
// whole, however it was made. errors.Is and errors.As see err. A nil err is nil.
func Err(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbed{err}
}

type scrubbed struct{ err error }

func (e *scrubbed) Error() string { return Text(e.err.Error()) }

func (e *scrubbed) Unwrap() error { return e.err }
