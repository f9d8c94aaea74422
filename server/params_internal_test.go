package server

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/studies"
)

// decodeTestParams exercises every kind of field the decoder reads.
type decodeTestParams struct {
	ID       uuid.UUID        `path:"id"`
	Side     string           `query:"side" validate:"required,oneof=buy sell"`
	Preview  bool             `query:"preview"`
	Quantity *decimal.Decimal `query:"quantity" validate:"omitnil,gt=0,lt=1000"`
	Page     int              `query:"page" default:"1" validate:"min=1,max=100"`
	Ratio    *float64         `query:"ratio" validate:"omitnil,gte=-1"`
	Params   jsonObject       `query:"params"`
	IDs      []uuid.UUID      `query:"ids[]" validate:"max=2"`
	Name     string           `query:"name" validate:"omitempty,max=5"`
	dateRange
}

// lenientTestParams takes parameters it does not declare.
type lenientTestParams struct {
	lenient
	State string `query:"state"`
}

// serveParams serves target through the endpoint of a handler taking P
// on the route pattern, and returns what the handler got, or the error
// the decoder returned.
func serveParams[P any](t *testing.T, pattern, target string) (P, error) {
	t.Helper()
	s := &Server{validate: newValidator()}
	var got P
	ep := bind(s, func(w http.ResponseWriter, req bunrouter.Request, p *P) error {
		got = *p
		return nil
	})
	var err error
	r := bunrouter.New()
	r.GET(pattern, func(w http.ResponseWriter, req bunrouter.Request) error {
		err = ep.handle(w, req)
		return nil
	})
	r.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", target, nil))
	return got, err
}

const testID = "3f0e8a52-5d0c-4a58-9d3e-0b7f1c2d4e5a"

func TestDecodeParams(t *testing.T) {
	t.Parallel()
	q := decimal.RequireFromString("2.5")
	ratio := -0.5
	id2 := uuid.New()
	tests := []struct {
		name, query string
		want        decodeTestParams
	}{
		{"defaults", "side=buy", decodeTestParams{Side: "buy", Page: 1}},
		{"every kind", "side=sell&preview=TRUE&quantity=2.5&page=7&ratio=-0.5&params=%7B%22period%22%3A14%7D&ids[]=" + testID +
			"&ids[]=" + id2.String() + "&name=abcde&from=2024-01-02&to=2024-01-02",
			decodeTestParams{Side: "sell", Preview: true, Quantity: &q, Page: 7, Ratio: &ratio, Params: `{"period":14}`,
				IDs: []uuid.UUID{uuid.MustParse(testID), id2}, Name: "abcde",
				dateRange: dateRange{From: calendar.Date{Year: 2024, Month: 1, Day: 2}, To: calendar.Date{Year: 2024, Month: 1, Day: 2}}}},
		{"false as 0", "side=buy&preview=0", decodeTestParams{Side: "buy", Page: 1}},
		{"empty free text", "side=buy&name=", decodeTestParams{Side: "buy", Page: 1}},
		{"same keys in different objects", "side=buy&params=" + escapeQuery(`{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}`),
			decodeTestParams{Side: "buy", Page: 1, Params: `{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}]}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := serveParams[decodeTestParams](t, "/x/:id", "/x/"+testID+"?"+tt.query)
			if err != nil {
				t.Fatal(err)
			}
			tt.want.ID = uuid.MustParse(testID)
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(decodeTestParams{})); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// escapeQuery escapes s for a query string.
func escapeQuery(s string) string {
	r := strings.NewReplacer("{", "%7B", "}", "%7D", `"`, "%22", ":", "%3A", ",", "%2C", "[", "%5B", "]", "%5D", " ", "%20")
	return r.Replace(s)
}

func TestDecodeParamsErrors(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 1000)
	tests := []struct {
		name, target string
		param, msg   string // msg: the whole message, or its start when it ends with "…"
	}{
		{"repeated", "?side=buy&side=sell", "side", "is given 2 times; give it once"},
		{"repeated with one value empty", "?side=buy&side=", "side", "is given 2 times; give it once"},
		{"unknown", "?side=buy&stopLossprice=900", "stopLossprice",
			"unknown parameter; the parameters are side, preview, quantity, page, ratio, params, ids[], name, from, to"},
		{"unknown, other case", "?Side=buy", "Side", "unknown parameter; did you mean side? The parameters are side, …"},
		{"unknown before repeated", "?side=buy&side=sell&zzz=1", "zzz", "unknown parameter; …"},
		{"unknown, no name", "?side=buy&=1", "(no name)", "unknown parameter; …"},
		{"unknown, long name", "?side=buy&" + long + "=1", strings.Repeat("x", 64) + "…", "unknown parameter; …"},
		{"missing", "?preview=true", "side", "is required: buy or sell"},
		{"empty enum", "?side=", "side", "is empty; give buy or sell"},
		{"empty bool", "?side=buy&preview=", "preview", "is empty; give true or false"},
		{"bool without =", "?side=buy&preview", "preview", "is empty; give true or false"},
		{"empty number", "?side=buy&page=", "page", "is empty; give a value or leave the parameter out"},
		{"bad enum", "?side=hold", "side", `must be buy or sell, got "hold"`},
		{"bad bool", "?side=buy&preview=yes", "preview", `must be true or false, got "yes"`},
		{"int out of range", "?side=buy&page=0", "page", `must be an integer from 1 to 100, got "0"`},
		{"not an int", "?side=buy&page=1.5", "page", `must be an integer from 1 to 100, got "1.5"`},
		{"int overflow", "?side=buy&page=99999999999999999999", "page", `must be an integer from 1 to 100, got "99999999999999999999"`},
		{"decimal out of range", "?side=buy&quantity=0", "quantity", `must be a number above 0 and below 1000, got "0"`},
		{"decimal too large to store", "?side=buy&quantity=1e10000", "quantity",
			`must be a number above 0 and below 1000, with at most 20 digits before the decimal point and 18 after, got "1e10000"`},
		{"decimal with a huge exponent", "?side=buy&quantity=1e-999", "quantity", `must be a number above 0 and below 1000, with …`},
		{"decimal with an exponent past the parser's", "?side=buy&quantity=1e-99999", "quantity", `must be a number above 0 and below 1000, got "1e-99999"`},
		{"decimal with too many places", "?side=buy&quantity=0.0000000000000000001", "quantity", `must be a number above 0 and below 1000, with …`},
		{"not a decimal", "?side=buy&quantity=ten", "quantity", `must be a number above 0 and below 1000, got "ten"`},
		{"float below", "?side=buy&ratio=-2", "ratio", `must be a number at least -1, got "-2"`},
		{"float NaN", "?side=buy&ratio=NaN", "ratio", `must be a number at least -1, got "NaN"`},
		{"float overflow", "?side=buy&ratio=1e400", "ratio", `must be a number at least -1, got "1e400"`},
		{"JSON key repeated", "?side=buy&params=" + escapeQuery(`{"period":1,"period":2}`), "params", `repeats the key "period": give each key once`},
		{"JSON key repeated deep", "?side=buy&params=" + escapeQuery(`{"a":[{"b":1,"b":2}]}`), "params", `repeats the key "b": give each key once`},
		{"JSON not an object", "?side=buy&params=" + escapeQuery(`[1]`), "params", `must be a JSON object such as {"period":20}, got "[1]"`},
		{"JSON trailing text", "?side=buy&params=" + escapeQuery(`{}x`), "params", `must be a JSON object such as {"period":20}, got "{}x"`},
		{"JSON nested too deeply", "?side=buy&params=" + escapeQuery(`{"a":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}`), "params", "must be a JSON object …"},
		{"too many values", "?side=buy&ids[]=" + testID + "&ids[]=" + testID + "&ids[]=" + testID, "ids[]", "is given 3 times; at most 2 are allowed"},
		{"bad value in a list", "?side=buy&ids[]=" + testID + "&ids[]=nope", "ids[]", `each value must be a UUID such as ` + uuidExample + `, got "nope"`},
		{"text too long", "?side=buy&name=abcdef", "name", "is 6 characters long; at most 5 are allowed"},
		{"bad date", "?side=buy&from=2024-02-30", "from", `must be a date YYYY-MM-DD, got "2024-02-30"`},
		{"from after to", "?side=buy&from=2024-02-03&to=2024-02-02", "from", "must not be after to (2024-02-03 > 2024-02-02)"},
		{"long value cut", "?side=" + long, "side", `must be buy or sell, got "` + strings.Repeat("x", 64) + `"…`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serveParams[decodeTestParams](t, "/x/:id", "/x/"+testID+tt.target)
			wantParamError(t, err, tt.param, tt.msg)
		})
	}
	t.Run("path", func(t *testing.T) {
		_, err := serveParams[decodeTestParams](t, "/x/:id", "/x/"+long+"?side=buy")
		wantParamError(t, err, "id", "must be a UUID such as "+uuidExample+`, got "`+strings.Repeat("x", 64)+`"…`)
	})
	t.Run("no parameters", func(t *testing.T) {
		_, err := serveParams[struct{}](t, "/x", "/x?x=1")
		wantParamError(t, err, "x", "unknown parameter; this route takes no query parameters")
	})
}

// wantParamError fails unless err is a *tradekit.ParamError for param
// whose message is msg, or starts with it when msg ends with "…".
func wantParamError(t *testing.T, err error, param, msg string) {
	t.Helper()
	var pe *tradekit.ParamError
	if !errors.As(err, &pe) || !errors.Is(err, tradekit.ErrInvalid) {
		t.Fatalf("error %v, want a *tradekit.ParamError", err)
	}
	prefix, cut := strings.CutSuffix(msg, "…")
	if pe.Param != param || !(pe.Msg == msg || cut && strings.HasPrefix(pe.Msg, prefix)) {
		t.Errorf("got %q: %q\nwant %q: %q", pe.Param, pe.Msg, param, msg)
	}
	if len(pe.Error()) > 400 {
		t.Errorf("message of %d bytes", len(pe.Error()))
	}
}

func TestDecodeParamsLenient(t *testing.T) {
	t.Parallel()
	got, err := serveParams[lenientTestParams](t, "/cb", "/cb?state=s&iss=https%3A%2F%2Fbroker&scope=trade")
	if err != nil || got.State != "s" {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = serveParams[lenientTestParams](t, "/cb", "/cb?state=s&state=t")
	wantParamError(t, err, "state", "is given 2 times; give it once")
}

// checkedTestParams has a check method.
type checkedTestParams struct {
	N int `query:"n" default:"0"`
}

func (p *checkedTestParams) check() error {
	if p.N == 13 {
		return invalidParam("n", "is unlucky")
	}
	return nil
}

func TestDecodeParamsCheck(t *testing.T) {
	t.Parallel()
	if _, err := serveParams[checkedTestParams](t, "/c", "/c?n=12"); err != nil {
		t.Fatal(err)
	}
	_, err := serveParams[checkedTestParams](t, "/c", "/c?n=13")
	wantParamError(t, err, "n", "is unlucky")
}

// pagedTestParams embeds the shared page parameters.
type pagedTestParams struct {
	pageParams
}

func TestDecodeParamsEmbedded(t *testing.T) {
	t.Parallel()
	got, err := serveParams[pagedTestParams](t, "/p", "/p?page=3")
	if err != nil || got.Page != 3 || got.Limit != 20 {
		t.Fatalf("got %+v, %v", got, err)
	}
	_, err = serveParams[pagedTestParams](t, "/p", "/p?limit=101")
	wantParamError(t, err, "limit", `must be an integer from 1 to 100, got "101"`)
}

// TestIndicatorHint checks that the hint of a missing indicator lists the
// kinds that package studies serves.
func TestIndicatorHint(t *testing.T) {
	t.Parallel()
	f, _ := reflect.TypeFor[indicatorSeriesParams]().FieldByName("Indicator")
	if want := "one of " + strings.Join(studies.Kinds, ", "); f.Tag.Get("hint") != want {
		t.Errorf("hint %q, want %q", f.Tag.Get("hint"), want)
	}
}

// TestParamStructPanics checks that a parameter struct the decoder
// cannot read panics when the route table is built.
func TestParamStructPanics(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		typ  any
	}{
		{"not a struct", 0},
		{"no tag", struct{ A string }{}},
		{"both tags", struct {
			A string `query:"a" path:"a"`
		}{}},
		{"empty name", struct {
			A string `query:""`
		}{}},
		{"unsupported type", struct {
			A complex128 `query:"a"`
		}{}},
		{"declared twice", struct {
			A string `query:"a"`
			B string `query:"a"`
		}{}},
		{"required bool", struct {
			A bool `query:"a" validate:"required"`
		}{}},
		{"rules without omitempty", struct {
			A *int `query:"a" validate:"min=1"`
		}{}},
		{"optional path", struct {
			A *string `path:"a"`
		}{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			newParamSet(reflect.TypeOf(tt.typ))
		})
	}
}

// TestRouteParamsBuild checks that every route's parameter struct is one
// the decoder reads, and that every /api/v1 route declares its parameters.
func TestRouteParamsBuild(t *testing.T) {
	t.Parallel()
	for _, rt := range (&Server{}).routeTable() {
		if rt.params == nil {
			t.Errorf("%s %s reads its parameters itself", rt.method, rt.path)
		}
	}
}
