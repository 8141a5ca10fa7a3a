// Package strictjson decodes JSON that comes from outside eksboot's own process (an
// IMDS document, an AWS API's answer, the instance profile's credentials, a file a
// run wrote for the next one) as encoding/json does, after one pass over it that
// refuses what encoding/json takes silently or without a bound:
//
//   - a key given twice in one object: encoding/json keeps the last value, and it
//     matches a struct's fields ignoring case, so "region" and "Region" are one
//     field too (an identity document with instanceType twice was read with the
//     second);
//   - more than inputcheck.MaxDepth levels, more bytes or more values than the
//     caller's Limits.
//
// The pass reads tokens with encoding/json's own decoder, so what it accepts is
// JSON by encoding/json's grammar; a value that does not fit its target is
// encoding/json's error, as before.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
)

// Limits bound a document: its bytes and its values (every scalar, array and
// object, keys not counted). Zero means no bound of that kind beyond the depth.
type Limits struct {
	Bytes  int
	Values int
}

// Error is a document the pass refuses: the place (a path of keys and indexes,
// "cluster.certificateAuthority", "" for the document) and what is wrong there.
type Error struct {
	Path    string
	Problem string
}

func (e *Error) Error() string {
	if e.Path == "" {
		return e.Problem
	}
	return e.Path + ": " + e.Problem
}

// Unmarshal checks b (Check) and decodes it into v with encoding/json.
func Unmarshal(b []byte, v any, lim Limits) error {
	if err := Check(b, lim); err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// frame is an array or object being read.
type frame struct {
	object  bool
	keys    map[string]string // lower-cased key -> the key as written
	key     string            // the object's current key, as written
	wantKey bool              // the next string is a key
	index   int               // the array's current index
}

// Check reads b as one JSON value and returns an *Error for a key twice in one
// object (also in another case: encoding/json would take both for one field),
// for more than inputcheck.MaxDepth levels, or past lim; a syntax error is
// encoding/json's.
func Check(b []byte, lim Limits) error {
	if lim.Bytes > 0 && len(b) > lim.Bytes {
		return &Error{Problem: fmt.Sprintf("%d bytes, more than the %d allowed", len(b), lim.Bytes)}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []*frame
	values := 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) && len(stack) == 0 && values > 0 {
			break
		}
		if errors.Is(err, io.EOF) {
			return io.ErrUnexpectedEOF // as json.Unmarshal says it
		}
		if err != nil {
			return err
		}
		if len(stack) == 0 && values > 0 {
			return &Error{Problem: "more than one JSON value"}
		}
		top := (*frame)(nil)
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if s, ok := tok.(string); ok && top != nil && top.object && top.wantKey {
			k := strings.ToLower(s)
			if prev, dup := top.keys[k]; dup {
				problem := "a key given twice"
				if prev != s {
					problem = fmt.Sprintf("a key given twice (also as %s; encoding/json takes them for one field)", quote.Value(prev))
				}
				return &Error{Path: path(stack, s), Problem: problem}
			}
			top.keys[k], top.key, top.wantKey = s, s, false
			continue
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			advance(stack)
			continue
		}
		if values++; lim.Values > 0 && values > lim.Values {
			return &Error{Path: path(stack, ""), Problem: fmt.Sprintf("more than %d values", lim.Values)}
		}
		if d, ok := tok.(json.Delim); ok { // '{' or '['
			if len(stack)+1 > inputcheck.MaxDepth {
				return &Error{Path: path(stack, ""), Problem: fmt.Sprintf("nested more than %d levels deep", inputcheck.MaxDepth)}
			}
			f := &frame{object: d == '{', wantKey: d == '{'}
			if f.object {
				f.keys = map[string]string{}
			}
			stack = append(stack, f)
			continue
		}
		advance(stack)
	}
	return nil
}

// advance moves the innermost container past the value just read.
func advance(stack []*frame) {
	if len(stack) == 0 {
		return
	}
	top := stack[len(stack)-1]
	if top.object {
		top.wantKey = true
	} else {
		top.index++
	}
}

// path names the place being read: the keys and indexes of the containers in
// stack, then last (a key about to be read; "" for none).
func path(stack []*frame, last string) string {
	var b strings.Builder
	seg := func(s string) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(quote.Name(s))
	}
	for i, f := range stack {
		inner := i == len(stack)-1
		switch {
		case f.object && inner && last != "":
			seg(last)
		case f.object && !f.wantKey:
			seg(f.key)
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		}
	}
	return b.String()
}
