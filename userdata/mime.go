package userdata

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"mime/quotedprintable"
	"strings"

	"github.com/eksboot/eksboot/internal/lazy"
	"github.com/eksboot/eksboot/internal/quote"
)

var headerLine = lazy.Regexp{Expr: `^[A-Za-z0-9][A-Za-z0-9-]*:`}

// isMIME reports whether b starts with a MIME header (Content-Type or MIME-Version).
func isMIME(b []byte) bool {
	h, _ := readHeader(b)
	_, ct := h["content-type"]
	_, mv := h["mime-version"]
	return ct || mv
}

// IsMultipart reports whether b is a MIME document of a multipart type: nodeadm's
// test for a NodeConfig file (its ParseMaybeMultipart reads the NodeConfig parts of
// such a file, any other file as one NodeConfig).
func IsMultipart(b []byte) bool {
	if !isMIME(b) {
		return false
	}
	h, _ := readHeader(b)
	mt, _, err := parseType(h["content-type"])
	return err == nil && strings.HasPrefix(mt, "multipart/")
}

// readHeader reads header lines until a blank line or a line that is not a header
// (EKS's own part has no blank line before "#!/bin/bash"). The first occurrence of a
// name wins. It returns the headers (lower-case names) and the rest.
func readHeader(b []byte) (map[string]string, []byte) {
	h := map[string]string{}
	rest := b
	last := ""
	for len(rest) > 0 {
		line, next := cutLine(rest)
		t := strings.TrimRight(string(line), "\r\n")
		switch {
		case t == "":
			return h, next
		case (t[0] == ' ' || t[0] == '\t') && last != "":
			h[last] += " " + strings.TrimSpace(t) // folded continuation
		case headerLine.Get().MatchString(t):
			name, value, _ := strings.Cut(t, ":")
			last = strings.ToLower(name)
			if _, seen := h[last]; !seen {
				h[last] = strings.TrimSpace(value)
			} else {
				last = ""
			}
		default:
			return h, rest
		}
		rest = next
	}
	return h, rest
}

// cutLine returns the first line of b (with its line end) and the rest.
func cutLine(b []byte) ([]byte, []byte) {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i+1], b[i+1:]
	}
	return b, nil
}

// multipart adds the parts between the boundary delimiters. The line end before a
// delimiter belongs to it. A missing closing delimiter is tolerated (cloud-init does).
func (d *decoder) multipart(body []byte, boundary string, depth int) error {
	if boundary == "" {
		return fmt.Errorf("part %d: multipart Content-Type without a boundary", len(d.parts)+1)
	}
	delim := "--" + boundary
	var cur []byte
	in, found := false, false
	flush := func() error {
		if !in {
			return nil
		}
		cur = bytes.TrimSuffix(cur, []byte("\n"))
		cur = bytes.TrimSuffix(cur, []byte("\r"))
		return d.part(cur, depth)
	}
	rest := body
	for len(rest) > 0 {
		line, next := cutLine(rest)
		rest = next
		t := strings.TrimRight(string(line), " \t\r\n")
		if t == delim || t == delim+"--" {
			found = true
			if err := flush(); err != nil {
				return err
			}
			if t == delim+"--" {
				return nil
			}
			in, cur = true, nil
			continue
		}
		if in {
			cur = append(cur, line...)
		}
	}
	if !found {
		return fmt.Errorf("part %d: multipart document without a %s delimiter line", len(d.parts)+1, quote.Value(delim))
	}
	return flush()
}

// part decodes one MIME part (headers, transfer encoding, gzip) and adds it.
func (d *decoder) part(raw []byte, depth int) error {
	h, body := readHeader(raw)
	ct := h["content-type"]
	mt, _, err := parseType(ct)
	name := fmt.Sprintf("part %d (%s)", len(d.parts)+1, mt)
	if err != nil {
		return fmt.Errorf("part %d: Content-Type %s: %w", len(d.parts)+1, quote.Value(ct), err)
	}
	switch cte := strings.ToLower(h["content-transfer-encoding"]); cte {
	case "", "7bit", "8bit", "binary":
	case "base64":
		out, err := base64.StdEncoding.DecodeString(StripSpace(body))
		if err != nil {
			return fmt.Errorf("%s: Content-Transfer-Encoding base64: %w", name, err)
		}
		if err := d.spend(len(out)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		body = out
	case "quoted-printable":
		out, err := io.ReadAll(io.LimitReader(quotedprintable.NewReader(bytes.NewReader(body)), MaxDecoded+1))
		if err != nil {
			return fmt.Errorf("%s: Content-Transfer-Encoding quoted-printable: %w", name, err)
		}
		if err := d.spend(len(out)); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		body = out
	default:
		return fmt.Errorf("%s: Content-Transfer-Encoding %s: want 7bit, 8bit, binary, base64 or quoted-printable", name, quote.Value(cte))
	}
	if isGzip(body) {
		out, err := d.gunzip(body)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", name, err)
		}
		body = out
	} else if mt == TypeNodeConfig && looksBase64(bytes.TrimSpace(body)) {
		// nodeadm decodes a NodeConfig part that is base64 without saying so.
		if out, err := d.unwrap(bytes.TrimSpace(body), name); err == nil {
			body = out
		} else {
			return err
		}
	}
	return d.split(body, ct, depth+1)
}
