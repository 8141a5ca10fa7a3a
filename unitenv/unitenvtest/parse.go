// Package unitenvtest models, for tests, how systemd reads an Environment= value,
// so that a renderer's drop-in can be parsed back and compared with what it was
// given (kubeletconf's drop-ins, nodesys's environment files).
package unitenvtest

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse returns the assignments that systemd takes from the value of an
// Environment= line: the value is split into words as systemd's
// extract_first_word(EXTRACT_UNQUOTE|EXTRACT_CUNESCAPE) does (whitespace
// separates words; '...' and "..." quote, anywhere in a word; a backslash starts
// a C escape inside and outside quotes; an unknown escape, a trailing backslash or
// an unterminated quote make the line invalid), then in each word "%%" becomes
// "%" (specifier expansion; this helper knows no other specifier).
func Parse(value string) ([]string, error) {
	var words []string
	p := value
	for {
		p = strings.TrimLeft(p, " \t\n\r")
		if p == "" {
			return words, nil
		}
		word, rest, err := extractWord(p)
		if err != nil {
			return nil, err
		}
		word, err = expandSpecifiers(word)
		if err != nil {
			return nil, err
		}
		words = append(words, word)
		p = rest
	}
}

// extractWord reads one word from the start of p, which is not whitespace.
func extractWord(p string) (word, rest string, err error) {
	var b strings.Builder
	var quote byte // 0, '\'' or '"'
	for i := 0; i < len(p); {
		c := p[i]
		switch {
		case c == '\\':
			r, n, err := unescapeOne(p[i+1:])
			if err != nil {
				return "", "", err
			}
			b.WriteString(r)
			i += 1 + n
		case quote != 0 && c == quote:
			quote = 0
			i++
		case quote == 0 && (c == '\'' || c == '"'):
			quote = c
			i++
		case quote == 0 && strings.IndexByte(" \t\n\r", c) >= 0:
			return b.String(), p[i:], nil
		default:
			b.WriteByte(c)
			i++
		}
	}
	if quote != 0 {
		return "", "", errors.New("unterminated quote")
	}
	return b.String(), "", nil
}

// unescapeOne decodes the C escape at the start of s (the text after a
// backslash), as systemd's cunescape_one, and returns the text and the number of
// bytes of s it used.
func unescapeOne(s string) (string, int, error) {
	if s == "" {
		return "", 0, errors.New("trailing backslash")
	}
	simple := map[byte]string{
		'a': "\a", 'b': "\b", 'f': "\f", 'n': "\n", 'r': "\r", 't': "\t", 'v': "\v",
		'\\': `\`, '"': `"`, '\'': `'`, 's': " ",
	}
	if r, ok := simple[s[0]]; ok {
		return r, 1, nil
	}
	digits := map[byte]struct{ n, base int }{'x': {2, 16}, 'u': {4, 16}, 'U': {8, 16}}
	var n, base, skip int
	if d, ok := digits[s[0]]; ok {
		n, base, skip = d.n, d.base, 1
	} else if '0' <= s[0] && s[0] <= '7' {
		n, base, skip = 3, 8, 0
	} else {
		return "", 0, fmt.Errorf("unknown escape \\%c", s[0])
	}
	if len(s) < skip+n {
		return "", 0, fmt.Errorf("short escape \\%s", s)
	}
	v, err := strconv.ParseUint(s[skip:skip+n], base, 32)
	if err != nil || v == 0 || (s[0] == 'u' || s[0] == 'U') && !utf8.ValidRune(rune(v)) {
		return "", 0, fmt.Errorf("invalid escape \\%s", s[:skip+n])
	}
	if s[0] == 'x' || base == 8 {
		// \xNN and octal escapes give one byte, like systemd's eight_bit case
		// for values >= 0x80.
		if v > 0xff {
			return "", 0, fmt.Errorf("invalid escape \\%s", s[:skip+n])
		}
		if v >= 0x80 {
			return string([]byte{byte(v)}), skip + n, nil
		}
	}
	return string(rune(v)), skip + n, nil
}

// expandSpecifiers applies systemd's specifier expansion for "%%" and rejects
// every other specifier (none is expected in eksboot's drop-ins).
func expandSpecifiers(word string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(word); i++ {
		if word[i] != '%' {
			b.WriteByte(word[i])
			continue
		}
		if i+1 < len(word) && word[i+1] == '%' {
			b.WriteByte('%')
			i++
			continue
		}
		if i+1 == len(word) {
			b.WriteByte('%') // systemd keeps a trailing lone '%'
			continue
		}
		return "", fmt.Errorf("specifier %%%c would be expanded", word[i+1])
	}
	return b.String(), nil
}
