package nodeconfig

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/eksboot/eksboot/inputcheck"
	"github.com/eksboot/eksboot/internal/quote"
	"github.com/eksboot/eksboot/kubeletconf"
)

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// checkKubeletConfig walks a partial KubeletConfiguration against the upstream
// v1beta1 type: unknown fields and values of the wrong JSON type are appended to errs
// with their path under at, every one. What it takes as it is (types with their own
// decoding) kubeletconf.CheckOverlay checks next, in the same decoding (decodeOne),
// and makes the checked form the NodeConfig carries.
func checkKubeletConfig(c map[string]any, at string, errs Errors) Errors {
	return checkFields(c, typeOf[kubeletconf.KubeletConfiguration](), at, errs)
}

// checkFields walks v (decoded JSON) against the Go type t by its json tags and
// appends an error for every unknown field and every value of the wrong JSON type.
// Types with their own JSON decoding (durations, quantities) are taken as they are.
func checkFields(v any, t reflect.Type, at string, errs Errors) Errors {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if v == nil || reflect.PointerTo(t).Implements(typeOf[json.Unmarshaler]()) || reflect.PointerTo(t).Implements(typeOf[encoding.TextUnmarshaler]()) {
		return errs
	}
	if t == typeOf[kubeletconf.CheckedOverlay]() {
		// spec.kubelet.config: an object here, walked by checkKubeletConfig.
		t = typeOf[map[string]any]()
	}
	bad := func(want string) Errors {
		return append(errs, fmt.Sprintf("%s: want %s, got %s", orRoot(at), want, jsonKind(v)))
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		fields := jsonFields(t)
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, ok := fields[k]
			if !ok {
				errs = append(errs, fmt.Sprintf("%s: unknown field", join(at, quote.Name(k))))
				continue
			}
			errs = checkFields(obj[k], ft, join(at, quote.Name(k)), errs)
		}
	case reflect.Map:
		obj, ok := v.(map[string]any)
		if !ok {
			return bad("an object")
		}
		if t.Elem().Kind() == reflect.Interface {
			return errs
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			errs = checkFields(obj[k], t.Elem(), join(at, quote.Name(k)), errs)
		}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			if _, ok := v.(string); !ok {
				return bad("a string")
			}
			return errs
		}
		list, ok := v.([]any)
		if !ok {
			return bad("a list")
		}
		for i, e := range list {
			errs = checkFields(e, t.Elem(), fmt.Sprintf("%s[%d]", at, i), errs)
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			return bad("a string")
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return bad("true or false")
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		f, ok := v.(float64)
		if !ok || f != float64(int64(f)) {
			return bad("a whole number")
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := v.(float64); !ok {
			return bad("a number")
		}
	}
	return errs
}

// jsonFields maps the JSON names of t's fields (inline embedded structs flattened)
// to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || (!f.IsExported() && !f.Anonymous) {
			continue
		}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range jsonFields(ft) {
					out[k] = v
				}
				continue
			}
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(at, k string) string {
	if at == "" {
		return k
	}
	return at + "." + k
}

func orRoot(at string) string {
	if at == "" {
		return "document"
	}
	return at
}

// jsonKind names the JSON type of a decoded value.
func jsonKind(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "the string " + quote.Value(v)
	case bool:
		return fmt.Sprintf("%v", v)
	case float64:
		return fmt.Sprintf("the number %v", v)
	}
	return fmt.Sprintf("%T", v)
}

// textChecked are the NodeConfig fields whose strings are checked by their own
// grammar, not by checkText: the containerd overlay is a TOML document (lines are
// its syntax; its keys and strings are checked once decoded), the CA is base64
// that may be wrapped, kubelet flags and environment values may hold a tab and are
// checked where they are rendered.
var textChecked = []string{
	"spec.containerd.config",
	"spec.cluster.certificateAuthority",
	"spec.kubelet.flags",
	"spec.instance.environment",
}

// checkText appends an error for every key and string of v (a decoded NodeConfig)
// that is not text of one line (inputcheck.CheckText: no control character, a tab
// included), naming its path, except in textChecked. Every value of a NodeConfig
// lands in a line-oriented file or a program's argument.
func checkText(v any, at string, errs Errors) Errors {
	for _, f := range textChecked {
		if at == f || strings.HasPrefix(at, f+".") || strings.HasPrefix(at, f+"[") {
			return errs
		}
	}
	switch v := v.(type) {
	case string:
		if err := inputcheck.CheckText(v, false); err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", orRoot(at), err))
		}
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := join(at, quote.Name(k))
			if err := inputcheck.CheckText(k, false); err != nil {
				errs = append(errs, fmt.Sprintf("%s: key: %v", p, err))
				continue
			}
			errs = checkText(v[k], p, errs)
		}
	case []any:
		for i, e := range v {
			errs = checkText(e, fmt.Sprintf("%s[%d]", at, i), errs)
		}
	}
	return errs
}
