package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Every route declares its parameters once, as a struct: a field per
// parameter, tagged path:"name" or query:"name", and optionally
//
//	validate:"…"  rules of go-playground/validator: required, oneof, min, max, gt, lte, …
//	default:"…"   the text read when the parameter is absent
//	hint:"…"      what to give, told when a required parameter is missing
//
// A field is a string (or a type of kind string), bool, int, float64,
// [decimal.Decimal], [uuid.UUID], [calendar.Date] or [jsonObject]; a
// pointer to one is nil when the parameter is absent, and a slice of one
// takes the parameter repeated. Structs without tags are embedded to
// share parameters ([dateRange], [pageParams]); unexported fields are
// left to check. A struct whose pointer has a check() error method gets
// it called after the rules hold: the place for rules across parameters
// and for the domain's own checks that need no lookup.
//
// [bind] reads a request into its route's struct, strictly: a parameter
// the route does not declare, one given more than once (but for slices),
// and an empty value for any parameter that is not free text are each a
// 400 naming the parameter. Every check runs before the handler, and so
// before any lookup: a bad parameter is a 400 even where the resource it
// names does not exist.

// dateLayout is the API's date form.
const dateLayout = "2006-01-02"

// uuidExample shows the form of a UUID in messages.
const uuidExample = "3f0e8a52-5d0c-4a58-9d3e-0b7f1c2d4e5a"

// The bounds of a decimal parameter, those of the NUMERIC(38, 18)
// columns: a value beyond them could not be stored, and would print as
// thousands of digits in a message (1e10000).
const (
	decimalIntDigits = 20
	decimalPlaces    = 18
)

// jsonObject is a parameter holding a JSON object, such as an
// indicator's params: its keys are unique at every depth, since a
// repeated key would silently take one of its values.
type jsonObject string

// lenient, embedded in a parameter struct, lets the route take query
// parameters it does not declare. Only a route that the outside calls
// with parameters of its own choosing may embed it (an OAuth callback:
// RFC 6749 4.1.2 tells clients to ignore those they do not know).
type lenient struct{}

// dateRange is the inclusive from and to of a query; zero when absent.
type dateRange struct {
	From calendar.Date `query:"from"`
	To   calendar.Date `query:"to"`
}

// check refuses from after to.
func (r dateRange) check() error {
	if r.From.IsValid() && r.To.IsValid() && r.From.After(r.To) {
		return invalidParam("from", "must not be after to (%s > %s)", r.From, r.To)
	}
	return nil
}

// pageParams selects a page of a paginated list (spec 8: 20 items by
// default, 100 at most). A limit above 100 is a 400, not clamped, so
// that a client never silently gets fewer items than it asked for.
type pageParams struct {
	Page  int `query:"page" default:"1" validate:"min=1,max=1000000"`
	Limit int `query:"limit" default:"20" validate:"min=1,max=100"`
}

// idParams is the parameter of a route on one resource: its id.
type idParams struct {
	ID uuid.UUID `path:"id"`
}

// assetIDParams is the parameter of a route on one asset's data.
type assetIDParams struct {
	AssetID uuid.UUID `path:"assetId"`
}

// symbolParams is the parameter of a lookup by symbol.
type symbolParams struct {
	Symbol string `path:"symbol"`
}

// slugParams is the parameter of a lookup by slug.
type slugParams struct {
	Slug string `path:"slug"`
}

// checker is a parameter struct with rules of its own.
type checker interface{ check() error }

// endpoint is a route's handler and the parameters it declares.
type endpoint struct {
	handle bunrouter.HandlerFunc
	params *paramSet
}

// bind returns the endpoint of h, whose parameters are the fields of P:
// each request is decoded into a new P and checked (see above), and h
// runs only when every check holds. It panics on a P the decoder cannot
// read, when the route table is built.
func bind[P any](s *Server, h func(http.ResponseWriter, bunrouter.Request, *P) error) endpoint {
	ps := newParamSet(reflect.TypeFor[P]())
	return endpoint{params: ps, handle: func(w http.ResponseWriter, req bunrouter.Request) error {
		var p P
		if err := s.decodeParams(req, ps, &p); err != nil {
			return err
		}
		return h(w, req, &p)
	}}
}

// bindNone returns the endpoint of h, a route that takes no parameters:
// any parameter is refused as unknown.
func bindNone(s *Server, h bunrouter.HandlerFunc) endpoint {
	return bind(s, func(w http.ResponseWriter, req bunrouter.Request, _ *struct{}) error {
		return h(w, req)
	})
}

// paramKind is how a parameter's text is read.
type paramKind int

const (
	kindText    paramKind = iota // a string: any text
	kindEnum                     // a string, one of the oneof values
	kindBool                     // true, false, 1 or 0
	kindInt                      // a decimal integer
	kindFloat                    // a finite float64
	kindDecimal                  // a decimal.Decimal within the NUMERIC bounds
	kindUUID                     // a UUID in its 36-character form
	kindDate                     // a date YYYY-MM-DD
	kindJSON                     // a JSON object without repeated keys
)

// The types the decoder reads besides the basic kinds.
var (
	uuidType    = reflect.TypeFor[uuid.UUID]()
	decimalType = reflect.TypeFor[decimal.Decimal]()
	dateType    = reflect.TypeFor[calendar.Date]()
	jsonType    = reflect.TypeFor[jsonObject]()
	lenientType = reflect.TypeFor[lenient]()
)

// paramField is one declared parameter.
type paramField struct {
	name     string       // as in the path or the query
	inPath   bool         // a path parameter, else a query parameter
	index    []int        // the field's index path in the struct
	goPath   string       // the field's Go path below the struct, as validator names it: "pageParams.Limit"
	elem     reflect.Type // the value's type: the field's, or the element's of a pointer or a slice
	kind     paramKind
	ptr      bool    // *T: nil when absent
	slice    bool    // []T: may be repeated
	required bool    // validate:"required"
	omit     bool    // validate:"omitempty" or "omitnil"
	def      *string // the default text
	hint     string
	oneof    []string
	lower    string // the lower bound of validate's min, gte or gt, "" for none
	upper    string // the upper bound of max, lte or lt
	lowerGT  bool   // lower is exclusive (gt)
	upperLT  bool   // upper is exclusive (lt)
}

// paramSet is the parameters of a route.
type paramSet struct {
	typ      reflect.Type
	fields   []paramField
	query    map[string]int // query parameters by name: indexes into fields
	byGoPath map[string]int
	lenient  bool // undeclared query parameters are ignored
	rules    bool // some field has validate rules
}

// newParamSet reads the parameter struct t. It panics on a struct the
// decoder cannot read: the route table is wrong, not the request.
func newParamSet(t reflect.Type) *paramSet {
	if t.Kind() != reflect.Struct {
		panic("server: parameters of type " + t.String() + " are not a struct")
	}
	ps := &paramSet{typ: t, query: map[string]int{}, byGoPath: map[string]int{}}
	ps.addFields(t, nil, "")
	return ps
}

// addFields adds the tagged fields of t, whose index path in the
// parameter struct is index, and those of its embedded structs.
func (ps *paramSet) addFields(t reflect.Type, index []int, goPath string) {
	for i := range t.NumField() {
		sf := t.Field(i)
		idx := append(slices.Clip(index), i)
		gp := goPath + sf.Name
		q, inQuery := sf.Tag.Lookup("query")
		p, inPath := sf.Tag.Lookup("path")
		switch {
		case !sf.IsExported() && !sf.Anonymous:
			// What check derives from the parameters.
		case sf.Anonymous && sf.Type == lenientType:
			ps.lenient = true
		case sf.Anonymous && !inQuery && !inPath && sf.Type.Kind() == reflect.Struct:
			ps.addFields(sf.Type, idx, gp+".")
		case inQuery == inPath:
			panic(fmt.Sprintf("server: %s.%s: want one of the tags query and path", ps.typ, sf.Name))
		default:
			f := newParamField(ps.typ, sf, q+p, inPath)
			f.index, f.goPath = idx, gp
			if _, dup := ps.query[f.name]; dup || slices.ContainsFunc(ps.fields, func(g paramField) bool { return g.name == f.name }) {
				panic(fmt.Sprintf("server: %s: parameter %s declared twice", ps.typ, f.name))
			}
			ps.byGoPath[gp] = len(ps.fields)
			if !inPath {
				ps.query[f.name] = len(ps.fields)
			}
			ps.rules = ps.rules || sf.Tag.Get("validate") != ""
			ps.fields = append(ps.fields, f)
		}
	}
}

// newParamField reads the field sf of the parameter struct t.
func newParamField(t reflect.Type, sf reflect.StructField, name string, inPath bool) paramField {
	f := paramField{name: name, inPath: inPath, elem: sf.Type, hint: sf.Tag.Get("hint")}
	switch sf.Type.Kind() {
	case reflect.Pointer:
		f.ptr, f.elem = true, sf.Type.Elem()
	case reflect.Slice:
		f.slice, f.elem = true, sf.Type.Elem()
	}
	if d, ok := sf.Tag.Lookup("default"); ok {
		f.def = &d
	}
	rules := sf.Tag.Get("validate")
	for _, rule := range strings.Split(rules, ",") {
		tag, arg, _ := strings.Cut(rule, "=")
		switch tag {
		case "omitempty", "omitnil":
			f.omit = true
		case "required":
			f.required = true
		case "oneof":
			f.oneof = strings.Fields(arg)
		case "min", "gte", "gt":
			f.lower, f.lowerGT = arg, tag == "gt"
		case "max", "lte", "lt":
			f.upper, f.upperLT = arg, tag == "lt"
		}
	}
	f.kind = kindOf(f.elem, f.oneof != nil)
	bad := func(why string) {
		panic(fmt.Sprintf("server: %s.%s: %s", t, sf.Name, why))
	}
	switch {
	case f.kind < 0:
		bad("unsupported type " + sf.Type.String())
	case name == "":
		bad("empty parameter name")
	case inPath && (f.ptr || f.slice || f.def != nil):
		bad("a path parameter is always present: no pointer, slice or default")
	case rules != "" && !f.required && f.def == nil && !f.inPath && !f.omit && !f.slice:
		// validator checks the zero value of an absent parameter too
		// (a nil slice has length 0: rules on lengths hold).
		bad("an optional parameter's rules must start with omitempty (omitnil for a pointer)")
	case f.required && !f.ptr && !f.slice && f.kind != kindText && f.kind != kindEnum && f.kind != kindUUID:
		// validator's required refuses a zero value: false, 0.
		bad("a required " + f.elem.String() + " must be a pointer")
	}
	return f
}

// kindOf returns how a value of type t is read; -1 for a type the
// decoder does not read.
func kindOf(t reflect.Type, enum bool) paramKind {
	switch t {
	case uuidType:
		return kindUUID
	case decimalType:
		return kindDecimal
	case dateType:
		return kindDate
	case jsonType:
		return kindJSON
	}
	switch t.Kind() {
	case reflect.String:
		if enum {
			return kindEnum
		}
		return kindText
	case reflect.Bool:
		return kindBool
	case reflect.Int, reflect.Int64, reflect.Int32:
		return kindInt
	case reflect.Float64:
		return kindFloat
	}
	return -1
}

// decodeParams decodes the parameters of req into dst, a pointer to the
// struct of ps, and checks them: the decoder's rules, then validator's,
// then dst's check method. Every error is a *tradekit.ParamError naming
// a parameter, or an error of kind [tradekit.ErrInvalid].
func (s *Server) decodeParams(req bunrouter.Request, ps *paramSet, dst any) error {
	q, err := url.ParseQuery(req.URL.RawQuery)
	if err != nil {
		return errorf(tradekit.ErrInvalid, "malformed query string: %v", err)
	}
	if err := ps.checkNames(q); err != nil {
		return err
	}
	v := reflect.ValueOf(dst).Elem()
	raws := make([]string, len(ps.fields))
	for i := range ps.fields {
		f := &ps.fields[i]
		values := q[f.name]
		if f.inPath {
			values = []string{pathParam(req, f.name)}
		}
		if raws[i], err = f.decode(v.FieldByIndex(f.index), values); err != nil {
			return err
		}
	}
	if ps.rules {
		if err := s.validate.Struct(dst); err != nil {
			return ps.ruleError(err, raws)
		}
	}
	if c, ok := dst.(checker); ok {
		return c.check()
	}
	return nil
}

// checkNames refuses a query parameter that ps does not declare (unless
// lenient), and one given more than once that is not a slice.
func (ps *paramSet) checkNames(q url.Values) error {
	names := make([]string, 0, len(q))
	for name := range q {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, ok := ps.query[name]; !ok && !ps.lenient {
			return ps.unknownParam(name)
		}
	}
	for _, name := range names {
		if i, ok := ps.query[name]; ok && len(q[name]) > 1 && !ps.fields[i].slice {
			return invalidParam(name, "is given %d times; give it once", len(q[name]))
		}
	}
	return nil
}

// unknownParam returns the 400 of a query parameter that ps does not
// declare: it lists those it does.
func (ps *paramSet) unknownParam(name string) error {
	var names []string
	for _, f := range ps.fields {
		if !f.inPath {
			names = append(names, f.name)
		}
	}
	if name == "" {
		name = "(no name)"
	}
	if len(names) == 0 {
		return invalidParam(clip(name), "unknown parameter; this route takes no query parameters")
	}
	msg := "unknown parameter; the parameters are " + strings.Join(names, ", ")
	for _, n := range names {
		if strings.EqualFold(n, name) {
			msg = "unknown parameter; did you mean " + n + "? The parameters are " + strings.Join(names, ", ")
		}
	}
	return invalidParam(clip(name), "%s", msg)
}

// decode sets the field fv from values, those given for the parameter
// (one for a path parameter), and returns the text it read: the first
// value, or the default.
func (f *paramField) decode(fv reflect.Value, values []string) (string, error) {
	if len(values) == 0 {
		switch {
		case f.def != nil:
			values = []string{*f.def}
		case f.required:
			return "", f.missing()
		default:
			return "", nil
		}
	}
	for _, raw := range values {
		if raw == "" && f.kind != kindText {
			return "", f.empty()
		}
		x, err := f.parse(raw)
		if err != nil {
			return "", err
		}
		switch {
		case f.slice:
			fv.Set(reflect.Append(fv, x))
		case f.ptr:
			p := reflect.New(f.elem)
			p.Elem().Set(x)
			fv.Set(p)
		default:
			fv.Set(x)
		}
	}
	return values[0], nil
}

// parse returns raw read as a value of the field's type.
func (f *paramField) parse(raw string) (reflect.Value, error) {
	var x any
	ok := true
	switch f.kind {
	case kindText, kindEnum:
		x = raw
	case kindBool:
		switch strings.ToLower(raw) {
		case "true", "1":
			x = true
		case "false", "0":
			x = false
		default:
			ok = false
		}
	case kindInt:
		n, err := strconv.ParseInt(raw, 10, f.elem.Bits())
		x, ok = n, err == nil
	case kindFloat:
		n, err := strconv.ParseFloat(raw, 64) // refuses what overflows
		x, ok = n, err == nil && !math.IsNaN(n) && !math.IsInf(n, 0)
	case kindDecimal:
		d, err := decimal.NewFromString(raw)
		if err == nil && !fitsNumeric(d) {
			return reflect.Value{}, f.invalid(raw, fmt.Sprintf(", with at most %d digits before the decimal point and %d after", decimalIntDigits, decimalPlaces))
		}
		x, ok = d, err == nil
	case kindUUID:
		id, err := uuid.Parse(raw)
		x, ok = id, err == nil && len(raw) == 36
		if ok && id == uuid.Nil {
			return reflect.Value{}, invalidParam(f.name, "is the nil UUID %s, which no resource has; give an id such as %s",
				raw, uuidExample)
		}
	case kindDate:
		t, err := time.Parse(dateLayout, raw)
		x, ok = calendar.DateOf(t), err == nil
	case kindJSON:
		key, err := scanJSONObject(raw)
		var ce *jsonControlError
		if errors.As(err, &ce) {
			return reflect.Value{}, invalidParam(f.name, "holds %s in the JSON string %s; remove it", ce.char, tradekit.Quote(ce.s))
		}
		if err == nil && key != nil {
			return reflect.Value{}, invalidParam(f.name, "repeats the key %s: give each key once", tradekit.Quote(*key))
		}
		x, ok = raw, err == nil
	}
	if !ok {
		return reflect.Value{}, f.invalid(raw, "")
	}
	return reflect.ValueOf(x).Convert(f.elem), nil
}

// fitsNumeric reports whether d fits the NUMERIC(38, 18) columns: at most
// decimalIntDigits digits before the point and decimalPlaces after. It
// never computes with an exponent from the text (1e-999999999 would take
// a power of ten of a billion digits).
func fitsNumeric(d decimal.Decimal) bool {
	if d.IsZero() {
		return true
	}
	exp := int(d.Exponent())
	switch {
	case exp > decimalIntDigits || d.NumDigits()+exp > decimalIntDigits:
		return false
	case exp >= -decimalPlaces:
		return true
	case exp < -(decimalPlaces + 2*decimalIntDigits):
		return false // so many places, even if the last are zeros
	}
	return d.Equal(d.Truncate(decimalPlaces))
}

// checkPlaces returns a 400 naming param when d has more than places
// decimal places.
func checkPlaces(param string, d *decimal.Decimal, places int32) error {
	if d != nil && !d.Equal(d.Truncate(places)) {
		return invalidParam(param, "must have at most %d decimal places, got %s", places, tradekit.Quote(d.String()))
	}
	return nil
}

// missing returns the 400 of the required parameter when it is absent.
func (f *paramField) missing() error {
	switch {
	case f.hint != "":
		return invalidParam(f.name, "is required: %s", f.hint)
	case f.kind == kindBool:
		return invalidParam(f.name, "is required: true or false")
	case f.kind == kindEnum:
		return invalidParam(f.name, "is required: %s", orList(f.oneof))
	}
	return invalidParam(f.name, "is required")
}

// empty returns the 400 of the parameter given without a value, which
// would otherwise read as absent: preview= is not preview=false.
func (f *paramField) empty() error {
	switch f.kind {
	case kindBool:
		return invalidParam(f.name, "is empty; give true or false")
	case kindEnum:
		return invalidParam(f.name, "is empty; give %s", orList(f.oneof))
	}
	return invalidParam(f.name, "is empty; give a value or leave the parameter out")
}

// invalid returns the 400 of the parameter whose text raw is not what it
// accepts; more is said after what it accepts.
func (f *paramField) invalid(raw, more string) error {
	what := f.describe()
	if f.slice {
		what = "each value " + what
	}
	return invalidParam(f.name, "%s%s, got %s", what, more, tradekit.Quote(raw))
}

// describe says what the parameter accepts: "must be an integer from 1
// to 100".
func (f *paramField) describe() string {
	switch f.kind {
	case kindBool:
		return "must be true or false"
	case kindInt:
		return "must be an integer" + f.span()
	case kindFloat, kindDecimal:
		return "must be a number" + f.span()
	case kindUUID:
		return "must be a UUID such as " + uuidExample
	case kindDate:
		return "must be a date YYYY-MM-DD"
	case kindJSON:
		return `must be a JSON object such as {"period":20}`
	case kindEnum:
		return "must be " + orList(f.oneof)
	}
	return "is not accepted"
}

// span describes the range of a number: " from 1 to 100", " above 0 and
// at most 100", " at least -1"; "" when unbounded.
func (f *paramField) span() string {
	lo, hi := " at least "+f.lower, " at most "+f.upper
	if f.lowerGT {
		lo = " above " + f.lower
	}
	if f.upperLT {
		hi = " below " + f.upper
	}
	switch {
	case f.lower != "" && f.upper != "" && !f.lowerGT && !f.upperLT:
		return " from " + f.lower + " to " + f.upper
	case f.lower != "" && f.upper != "":
		return lo + " and" + hi
	case f.lower != "":
		return lo
	case f.upper != "":
		return hi
	}
	return ""
}

// orList lists values for a message: "a", "a or b", "a, b or c".
func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

// ruleError returns the 400 of the first validator rule that failed,
// naming its parameter; raws are the texts the fields were read from.
func (ps *paramSet) ruleError(err error, raws []string) error {
	var ves validator.ValidationErrors
	if !errors.As(err, &ves) || len(ves) == 0 {
		return fmt.Errorf("server: validate %s: %w", ps.typ, err) // a programmer's error: a 500
	}
	fe := ves[0]
	_, goPath, _ := strings.Cut(fe.StructNamespace(), ".")
	i, ok := ps.byGoPath[goPath]
	if !ok {
		return fmt.Errorf("server: validate %s: a rule failed on %s, which is no parameter", ps.typ, fe.StructNamespace())
	}
	f := &ps.fields[i]
	n := lengthOf(fe.Value())
	switch {
	case fe.Tag() == "required" && f.kind == kindText:
		return f.missing()
	case f.slice && (fe.Tag() == "max" || fe.Tag() == "lte"):
		return invalidParam(f.name, "is given %d times; at most %s are allowed", n, fe.Param())
	case f.kind == kindText && (fe.Tag() == "max" || fe.Tag() == "lte"):
		return invalidParam(f.name, "is %d characters long; at most %s are allowed", n, fe.Param())
	case f.kind == kindText && (fe.Tag() == "min" || fe.Tag() == "gte"):
		return invalidParam(f.name, "is %d characters long; at least %s are needed", n, fe.Param())
	}
	return f.invalid(raws[i], "")
}

// lengthOf returns the length of a string in characters, or of a slice;
// 0 for anything else.
func lengthOf(v any) int {
	switch x := reflect.ValueOf(v); x.Kind() {
	case reflect.String:
		return utf8.RuneCountInString(x.String())
	case reflect.Slice:
		return x.Len()
	}
	return 0
}

// newValidator returns the validator of parameter structs: it reads a
// decimal as a float64 for its range rules, which is exact enough at the
// bounds the routes use (whole numbers) for any decimal that fits
// NUMERIC(38, 18).
func newValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterCustomTypeFunc(func(f reflect.Value) any {
		return f.Interface().(decimal.Decimal).InexactFloat64()
	}, decimal.Decimal{})
	return v
}

// pathParam returns the path parameter name, decoded. [Server.screen]
// hands the router every segment escaped one way, so a parameter decodes
// once, to the same text however the client escaped it.
func pathParam(req bunrouter.Request, name string) string {
	s := req.Param(name)
	if dec, err := url.PathUnescape(s); err == nil {
		return dec
	}
	return s
}

// maxJSONDepth bounds the nesting of a JSON parameter.
const maxJSONDepth = 16

// jsonControlError reports a string of a JSON parameter, a key or a
// value, that holds a control character or a byte that is not UTF-8
// (written as an escape, \u0000, which the query's own check cannot see).
type jsonControlError struct {
	s    string // the string
	char string // the character, described as badRune describes it
}

func (e *jsonControlError) Error() string { return "the JSON string holds " + e.char }

// checkJSONString returns a *jsonControlError when s holds what badRune
// refuses.
func checkJSONString(s string) error {
	if c, bad := badRune(s, false); bad {
		return &jsonControlError{s: s, char: c}
	}
	return nil
}

// scanJSONObject reads s, which must be one JSON object, and returns the
// first key repeated within an object at any depth, or nil when none is.
// A key or a string value holding a control character is a
// *jsonControlError.
func scanJSONObject(s string) (*string, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	dup, err := scanJSONMembers(dec, 1)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON object")
	}
	return dup, nil
}

// scanJSONMembers reads the members of an object whose '{' dec has read,
// and its '}'.
func scanJSONMembers(dec *json.Decoder, depth int) (*string, error) {
	seen := map[string]bool{}
	var dup *string
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := t.(string) // the decoder returns an object's keys as strings
		if err := checkJSONString(key); err != nil {
			return nil, err
		}
		if seen[key] && dup == nil {
			dup = &key
		}
		seen[key] = true
		inner, err := scanJSONValue(dec, depth)
		if err != nil {
			return nil, err
		}
		if dup == nil {
			dup = inner
		}
	}
	_, err := dec.Token() // '}'
	return dup, err
}

// scanJSONValue reads one value, and returns the first key repeated in an
// object within it.
func scanJSONValue(dec *json.Decoder, depth int) (*string, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if depth >= maxJSONDepth && (t == json.Delim('{') || t == json.Delim('[')) {
		return nil, errors.New("nested too deeply")
	}
	switch t {
	case json.Delim('{'):
		return scanJSONMembers(dec, depth+1)
	case json.Delim('['):
		var dup *string
		for dec.More() {
			inner, err := scanJSONValue(dec, depth+1)
			if err != nil {
				return nil, err
			}
			if dup == nil {
				dup = inner
			}
		}
		_, err := dec.Token() // ']'
		return dup, err
	}
	if s, ok := t.(string); ok {
		return nil, checkJSONString(s)
	}
	return nil, nil
}
