package kubeletconf

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Marshal renders cfg as kubelet-config.json: 2-space indented JSON with a trailing
// newline, object keys in the order of the Go struct fields, map keys sorted, so
// equal configurations give equal bytes.
//
// encoding/json writes the zero value of every non-pointer field without
// omitempty ("syncFrequency": "0s", "logging": {...}, "containerLogMaxFiles": 0).
// The kubelet reads an absent field and a zero non-pointer field the same way (it
// applies its default to both), so Marshal leaves out every non-pointer field that
// holds its zero value, at any depth, and every nil pointer. A non-nil pointer is
// written even when it points to a zero value: "anonymous": {"enabled": false} and
// "serializeImagePulls": false are settings, not noise. Values of types that
// implement json.Marshaler or encoding.TextMarshaler (Duration,
// Quantity, ...) are written by their own marshaler, without HTML
// escaping.
func Marshal(cfg *KubeletConfiguration) ([]byte, error) {
	if cfg == nil {
		return nil, errors.New("kubelet configuration is nil")
	}
	return marshalStruct(reflect.ValueOf(cfg).Elem())
}

// marshalStruct is Marshal for any struct value (the tests give it upstream types).
func marshalStruct(v reflect.Value) ([]byte, error) {
	var compact bytes.Buffer
	if err := encodeValue(&compact, v); err != nil {
		return nil, fmt.Errorf("encoding kubelet configuration: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("indenting kubelet configuration: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

var (
	jsonMarshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshalerType = reflect.TypeFor[encoding.TextMarshaler]()
)

// isPlainStruct reports whether t is a struct that Marshal walks field by field,
// rather than handing it to its own marshaler.
func isPlainStruct(t reflect.Type) bool {
	if t.Kind() != reflect.Struct {
		return false
	}
	pt := reflect.PointerTo(t)
	return !pt.Implements(jsonMarshalerType) && !pt.Implements(textMarshalerType)
}

// encodeValue writes v as compact JSON, pruning zero fields of plain structs,
// including structs inside pointers and slices.
func encodeValue(buf *bytes.Buffer, v reflect.Value) error {
	switch {
	case v.Kind() == reflect.Pointer && !v.IsNil() && isPlainStruct(v.Type().Elem()):
		return encodeValue(buf, v.Elem())
	case isPlainStruct(v.Type()):
		return encodeStruct(buf, v)
	case v.Kind() == reflect.Slice && !v.IsNil() && hasPlainStructElem(v.Type()):
		buf.WriteByte('[')
		for i := range v.Len() {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := encodeValue(buf, v.Index(i)); err != nil {
				return fmt.Errorf("[%d]: %w", i, err)
			}
		}
		buf.WriteByte(']')
		return nil
	default:
		return encodeLeaf(buf, v)
	}
}

// hasPlainStructElem reports whether slice type t holds plain structs or pointers
// to them.
func hasPlainStructElem(t reflect.Type) bool {
	e := t.Elem()
	if e.Kind() == reflect.Pointer {
		e = e.Elem()
	}
	return isPlainStruct(e)
}

// encodeStruct writes the fields of struct v that are set, in field order.
func encodeStruct(buf *bytes.Buffer, v reflect.Value) error {
	buf.WriteByte('{')
	seen := map[string]bool{}
	if err := encodeFields(buf, v, seen); err != nil {
		return err
	}
	buf.WriteByte('}')
	return nil
}

// encodeFields writes the set fields of struct v, each preceded by a comma unless
// it is the first key of the object (seen is empty), and inlines embedded structs
// without a JSON name, as encoding/json does.
func encodeFields(buf *bytes.Buffer, v reflect.Value, seen map[string]bool) error {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		fv := v.Field(i)
		if f.Anonymous && name == "" {
			inner := fv
			if inner.Kind() == reflect.Pointer {
				if inner.IsNil() {
					continue
				}
				inner = inner.Elem()
			}
			if inner.Kind() == reflect.Struct {
				if err := encodeFields(buf, inner, seen); err != nil {
					return err
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if unset(fv, strings.Contains(","+opts+",", ",omitempty,")) {
			continue
		}
		if seen[name] {
			return fmt.Errorf("duplicate key %q", name)
		}
		if len(seen) > 0 {
			buf.WriteByte(',')
		}
		seen[name] = true
		if err := encodeLeaf(buf, reflect.ValueOf(name)); err != nil {
			return err
		}
		buf.WriteByte(':')
		if err := encodeValue(buf, fv); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// unset reports whether field value v is left out: a nil pointer or interface, a
// non-pointer zero value, or (for omitempty fields) an empty slice, map or array.
func unset(v reflect.Value, omitEmpty bool) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map, reflect.Array:
		if omitEmpty && v.Len() == 0 {
			return true
		}
	}
	return v.IsZero()
}

// encodeLeaf writes v with encoding/json, without HTML escaping. Addressable values
// are passed by pointer so that pointer-receiver marshalers apply, as in
// encoding/json.
func encodeLeaf(buf *bytes.Buffer, v reflect.Value) error {
	if !v.CanInterface() {
		return fmt.Errorf("cannot encode unexported value of type %s", v.Type())
	}
	var tmp bytes.Buffer
	enc := json.NewEncoder(&tmp)
	enc.SetEscapeHTML(false)
	x := v.Interface()
	if v.CanAddr() {
		x = v.Addr().Interface()
	}
	if err := enc.Encode(x); err != nil {
		return err
	}
	buf.Write(bytes.TrimSuffix(tmp.Bytes(), []byte("\n")))
	return nil
}
