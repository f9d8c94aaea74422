package paper

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/tradekit/tradekit"
)

// The checks of what clients send the API: a NUL in a string is refused
// (PostgreSQL's text cannot hold one, and bun drops it silently, so the
// stored value would differ from the sent one), and what an error message
// echoes is cut with [tradekit.Quote].

// decodeJSON decodes the JSON body of an API request, of at most
// maxOrderBody bytes, into v, whose fields are what. The error is a
// *tradekit.ParamError naming the body, or the field that holds a NUL
// (see [checkNUL]); it never echoes more than [tradekit.MaxQuoted]
// characters of what was sent.
func decodeJSON(r io.Reader, v any, what string) error {
	err := json.NewDecoder(io.LimitReader(r, maxOrderBody)).Decode(v)
	if err == nil {
		return checkNUL(v)
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	msg := "must be " + what + " as JSON: "
	switch {
	case errors.As(err, &se):
		msg += fmt.Sprintf("malformed at byte %d", se.Offset)
	case errors.As(err, &te) && te.Field != "":
		return &tradekit.ParamError{Param: te.Field, Msg: "must be a JSON " + jsonKind(te.Type)}
	case errors.As(err, &te):
		msg += "must be a JSON " + jsonKind(te.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg += "it ends early"
	default:
		// The errors of the fields' own decoders (decimals) quote the
		// value they refuse, whole: say what was wrong without it.
		msg += "a number field holds " + tradekit.Quote(firstQuoted(err.Error()))
	}
	return &tradekit.ParamError{Param: "body", Msg: msg}
}

// jsonKind names the JSON type of a Go type, for decodeJSON's messages.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		if t.PkgPath() != "" {
			return "value of " + t.Name()
		}
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Struct:
		if t.PkgPath() == "github.com/shopspring/decimal" {
			return "number or string of digits"
		}
		return "object"
	}
	return "value"
}

// quotedPattern matches the first value a decoder's error quotes in
// single quotes.
var quotedPattern = regexp.MustCompile(`'([^']*)'`)

// firstQuoted returns the first single-quoted value of msg, without its
// JSON quotes, or msg when there is none.
func firstQuoted(msg string) string {
	m := quotedPattern.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	if s, err := strconv.Unquote(m[1]); err == nil {
		return s
	}
	return m[1]
}

// checkNUL returns a *tradekit.ParamError naming the first string in v
// (a struct, a pointer to one, a map, a slice, or a string) that holds a
// NUL byte, by its JSON name (e.g. "take_profit.limit_price"); nil when
// none does.
func checkNUL(v any) error {
	if name, ok := findNUL(reflect.ValueOf(v), ""); ok {
		if name == "" {
			name = "body"
		}
		return &tradekit.ParamError{Param: name, Msg: "must not contain a NUL character"}
	}
	return nil
}

// findNUL returns the JSON path under prefix of the first string in v
// holding a NUL byte, and whether there is one.
func findNUL(v reflect.Value, prefix string) (string, bool) {
	switch v.Kind() {
	case reflect.String:
		return prefix, strings.IndexByte(v.String(), 0) >= 0
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return "", false
		}
		return findNUL(v.Elem(), prefix)
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if name, ok := findNUL(v.Index(i), join(prefix, strconv.Itoa(i))); ok {
				return name, true
			}
		}
	case reflect.Map:
		it := v.MapRange()
		for it.Next() {
			k := fmt.Sprint(it.Key().Interface())
			if strings.IndexByte(k, 0) >= 0 {
				return join(prefix, cutName(k)), true
			}
			if name, ok := findNUL(it.Value(), join(prefix, cutName(k))); ok {
				return name, true
			}
		}
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if f.Anonymous && f.Tag.Get("json") == "" {
				name = ""
			}
			if n, ok := findNUL(v.Field(i), join(prefix, name)); ok {
				return n, true
			}
		}
	}
	return "", false
}

// join joins the parts of a JSON path with a dot.
func join(prefix, name string) string {
	if prefix == "" || name == "" {
		return prefix + name
	}
	return prefix + "." + name
}

// namePattern matches a parameter name that an error may show as it is.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9_.\-\[\]]{1,64}$`)

// cutName returns a parameter name that a client chose as an error may
// show it: as it is when it is a short plain name, else quoted and cut by
// [tradekit.Quote].
func cutName(name string) string {
	if namePattern.MatchString(name) {
		return name
	}
	return tradekit.Quote(name)
}

// checkRequestNUL refuses a request whose path or query string holds a
// NUL byte, naming the parameter (or "path").
func checkRequestNUL(r *http.Request) error {
	if strings.IndexByte(r.URL.Path, 0) >= 0 {
		return &tradekit.ParamError{Param: "path", Msg: "must not contain a NUL character"}
	}
	if !strings.Contains(r.URL.RawQuery, "%00") && strings.IndexByte(r.URL.RawQuery, 0) < 0 {
		return nil
	}
	for k, vs := range r.URL.Query() {
		for _, v := range append([]string{k}, vs...) {
			if strings.IndexByte(v, 0) >= 0 {
				return &tradekit.ParamError{Param: cutName(k), Msg: "must not contain a NUL character"}
			}
		}
	}
	return nil
}
