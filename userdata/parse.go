package userdata

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"mime"
	"strings"

	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
)

// Limits on untrusted input.
const (
	// MaxUserData is EC2's limit on user data (16 KiB encoded) with room to spare:
	// more than this is not user data an instance can have been given.
	MaxUserData = 64 << 10
	// MaxDecoded bounds everything that decoding (base64, gzip) produces, in total,
	// so a gzip bomb stops at 1 MiB.
	MaxDecoded = 1 << 20
	// maxDepth bounds nested layers (base64 of gzip of multipart of ...).
	maxDepth = 4
)

// Content types eksboot cares about.
const (
	TypeNodeConfig  = "application/node.eks.aws"
	TypeShellScript = "text/x-shellscript"
	TypeCloudConfig = "text/cloud-config"
	TypeBoothook    = "text/cloud-boothook"
	TypePlain       = "text/plain"
)

// Part is one piece of user data, decoded (no transfer encoding, no gzip).
type Part struct {
	// Index counts the parts from 1, in document order.
	Index int
	// ContentType is the media type without parameters, lower case; for user data
	// that is not MIME it is guessed from the first line.
	ContentType string
	// Body is the decoded content.
	Body []byte
}

// Name is "part N (content/type)", the way errors name the part.
func (p Part) Name() string { return fmt.Sprintf("part %d (%s)", p.Index, p.ContentType) }

// Parse splits raw user data into its parts. It accepts plain text, base64 of the
// whole document, gzip, and MIME multipart (tolerating duplicated headers, a missing
// blank line after the headers, unquoted boundaries and CRLF or LF line ends), whose
// parts may be base64, quoted-printable or gzip. Every problem is an error naming the
// part.
func Parse(raw []byte) ([]Part, error) {
	if len(raw) > MaxUserData {
		return nil, fmt.Errorf("user data: %d bytes, more than the %d allowed", len(raw), MaxUserData)
	}
	d := &decoder{budget: MaxDecoded}
	body, err := d.unwrap(raw, "user data")
	if err != nil {
		return nil, err
	}
	if err := d.split(body, "", 0); err != nil {
		return nil, err
	}
	return d.parts, nil
}

// decoder holds the parts found so far and what is left of the decoding budget.
type decoder struct {
	parts  []Part
	budget int
}

// unwrap removes whole-document gzip and base64 layers.
func (d *decoder) unwrap(b []byte, what string) ([]byte, error) {
	for range maxDepth {
		switch {
		case isGzip(b):
			out, err := d.gunzip(b)
			if err != nil {
				return nil, fmt.Errorf("%s: gzip: %w", what, err)
			}
			b = out
		case looksBase64(b):
			out, err := base64.StdEncoding.DecodeString(StripSpace(b))
			if err != nil || len(out) == 0 {
				return b, nil // text that merely looks like base64
			}
			if err := d.spend(len(out)); err != nil {
				return nil, fmt.Errorf("%s: base64: %w", what, err)
			}
			b = out
		default:
			return b, nil
		}
	}
	return b, nil
}

var errTooBig = fmt.Errorf("decoded data over the %d-byte limit (a gzip bomb?)", MaxDecoded)

func (d *decoder) spend(n int) error {
	d.budget -= n
	if d.budget < 0 {
		return errTooBig
	}
	return nil
}

func isGzip(b []byte) bool { return len(b) >= 2 && b[0] == 0x1f && b[1] == 0x8b }

// Gunzip decompresses b, failing past limit bytes of output (cloud-init's gz
// encodings of write_files, in render's simulation).
func Gunzip(b []byte, limit int) ([]byte, error) {
	d := &decoder{budget: limit}
	return d.gunzip(b)
}

// gunzip decompresses b within the budget.
func (d *decoder) gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	out, err := io.ReadAll(io.LimitReader(zr, int64(d.budget)+1))
	if err != nil {
		return nil, err
	}
	if err := d.spend(len(out)); err != nil {
		return nil, err
	}
	return out, nil
}

var base64Text = lazy.Regexp{Expr: `^[A-Za-z0-9+/\r\n]+={0,2}[\r\n]*$`}

// looksBase64 reports whether b is base64 text only (line breaks allowed) of a
// length that can decode. YAML, scripts and MIME always have other characters.
func looksBase64(b []byte) bool {
	return len(b) >= 8 && len(StripSpace(b))%4 == 0 && base64Text.Get().Match(b)
}

// StripSpace drops the line ends, spaces and tabs that wrap base64 text.
func StripSpace(b []byte) string {
	return strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == ' ' || r == '\t' {
			return -1
		}
		return r
	}, string(b))
}

// split adds the parts of body: the parts of a MIME document (recursively), or body
// itself as one part.
func (d *decoder) split(body []byte, contentType string, depth int) error {
	if contentType == "" && isMIME(body) {
		h, rest := readHeader(body)
		ct := h["content-type"]
		if ct == "" {
			ct = TypePlain
		}
		return d.split(rest, ct, depth)
	}
	mt, params, err := parseType(contentType)
	if contentType != "" && err != nil {
		return fmt.Errorf("part %d: Content-Type %s: %w", len(d.parts)+1, quote.Value(contentType), err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		if depth >= maxDepth {
			return fmt.Errorf("part %d: multipart nested more than %d deep", len(d.parts)+1, maxDepth)
		}
		return d.multipart(body, params["boundary"], depth)
	}
	if mt == "" {
		mt = guessType(body)
	}
	d.parts = append(d.parts, Part{Index: len(d.parts) + 1, ContentType: mt, Body: body})
	return nil
}

// parseType parses a Content-Type value, tolerating "charset=..." given alone
// (eksctl's second Content-Type line) by the caller taking the first line only.
func parseType(v string) (string, map[string]string, error) {
	if v == "" {
		return "", nil, nil
	}
	mt, params, err := mime.ParseMediaType(v)
	if err != nil && mt == "" {
		return "", nil, err
	}
	if errors.Is(err, mime.ErrInvalidMediaParameter) {
		params = lenientParams(v)
	}
	return strings.ToLower(mt), params, nil
}

// lenientParams reads the parameters of a Content-Type value the way cloud-init's
// parser (Python's email package) does when they break RFC 2045: each "; name=value"
// with surrounding space and quotes removed, so that eksctl's unquoted
// "boundary=//" (a '/' is not allowed in a token) gives the boundary "//", as on a
// node. Go's mime.ParseMediaType refuses such a value.
func lenientParams(v string) map[string]string {
	params := map[string]string{}
	_, rest, _ := strings.Cut(v, ";")
	for _, p := range strings.Split(rest, ";") {
		name, value, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		name = strings.ToLower(strings.TrimSpace(name))
		value = strings.TrimSpace(value)
		if len(value) >= 2 && value[0] == '"' && value[len(value)-1] == '"' {
			value = value[1 : len(value)-1]
		}
		if _, seen := params[name]; name != "" && !seen {
			params[name] = value
		}
	}
	return params
}

// guessType is cloud-init's rule for a document without a Content-Type: by its start.
func guessType(b []byte) string {
	s := strings.TrimLeft(string(b[:min(len(b), 4096)]), " \t\r\n")
	switch {
	case strings.HasPrefix(s, "#!"):
		return TypeShellScript
	case strings.HasPrefix(s, "#cloud-config"):
		return TypeCloudConfig
	case strings.HasPrefix(s, "#cloud-boothook"):
		return TypeBoothook
	case strings.Contains(s, "node.eks.aws/") || strings.Contains(s, "kind: NodeConfig"):
		return TypeNodeConfig
	}
	return TypePlain
}
