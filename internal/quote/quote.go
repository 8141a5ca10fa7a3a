// Package quote is how eksboot's errors quote a value they were given: a short,
// escaped prefix, never a certificate or key, and at most a few problems per line.
// It exists because errors end up on one journald line and in cloud-init's console
// log: a value there must be short (a 60 KB cluster name made a 60 KB line), must
// not carry control characters, and must not be a secret (a CA passed to the wrong
// flag was echoed whole).
package quote

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxBytes is how many bytes of a value Value shows.
const MaxBytes = 40

// MaxProblems is how many problems List shows.
const MaxProblems = 10

// Value quotes s for an error message: Go-quoted (control characters and bytes that
// are not UTF-8 escaped), at most MaxBytes of it followed by "…(N bytes)" when it is
// longer. A value that is or encodes a certificate (PEM, DER, or either in base64) is
// "a certificate (not shown)", and any other PEM block (a key) "a PEM block (not
// shown)".
func Value(s string) string {
	switch pemOrCert(s) {
	case certificate:
		return "a certificate (not shown)"
	case pemBlock:
		return "a PEM block (not shown)"
	}
	if len(s) <= MaxBytes {
		return strconv.Quote(s)
	}
	cut := MaxBytes
	for cut > MaxBytes-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s…(%d bytes)", strconv.Quote(s[:cut]), len(s))
}

// Name is s as a segment of a path in a message (spec.featureGates.<Name>): s
// itself when it is a short word of letters, digits, '_', '-', '.' or '/', else
// Value(s).
func Name(s string) string {
	if s == "" || len(s) > MaxBytes {
		return Value(s)
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' && c != '/' {
			return Value(s)
		}
	}
	return s
}

// List joins problems with "; ", the first MaxProblems of them, and says how many
// more there are.
func List(problems []string) string {
	if len(problems) <= MaxProblems {
		return strings.Join(problems, "; ")
	}
	return fmt.Sprintf("%s; and %d more", strings.Join(problems[:MaxProblems], "; "), len(problems)-MaxProblems)
}

type kind int

const (
	plain kind = iota
	certificate
	pemBlock
)

// pemOrCert tells whether s is a PEM block or a certificate, as text or in base64.
// A base64 PEM block is found by its encoded header, anywhere in s (so a CA cut
// short, with a stray character or after a prefix is still hidden); DER, by
// parsing the whole value.
func pemOrCert(s string) kind {
	if k := pemKind([]byte(s)); k != plain {
		return k
	}
	clean := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\n' || r == '\r' || r == '\t' {
			return -1
		}
		return r
	}, s)
	if len(clean) < 16 {
		return plain
	}
	// Base64 of a PEM block starts with that of "-----BEGI", wherever it is.
	if i := strings.Index(clean, "LS0tLS1CRUdJT"); i >= 0 {
		head := clean[i:]
		head = head[:min(len(head), 64)&^3]
		if b, err := base64.StdEncoding.DecodeString(head); err == nil {
			if k := pemKind(b); k != plain {
				return k
			}
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if der, err := enc.DecodeString(clean); err == nil {
			if _, err := x509.ParseCertificate(der); err == nil {
				return certificate
			}
		}
	}
	if _, err := x509.ParseCertificate([]byte(s)); err == nil {
		return certificate
	}
	return plain
}

// pemKind finds a PEM header in b: a certificate's, another block's, or none.
func pemKind(b []byte) kind {
	i := bytes.Index(b, []byte("-----BEGIN "))
	if i < 0 {
		return plain
	}
	if bytes.HasPrefix(b[i:], []byte("-----BEGIN CERTIFICATE")) || bytes.HasPrefix(b[i:], []byte("-----BEGIN TRUSTED CERTIFICATE")) {
		return certificate
	}
	return pemBlock
}
