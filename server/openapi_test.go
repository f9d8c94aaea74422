package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/api"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/internal/jsonnum"
	"github.com/tradekit/tradekit/server"
)

// The document, loaded and resolved once for the whole test binary.
var loadDocument = sync.OnceValues(func() (*openapi3.T, error) {
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(api.YAML())
	if err != nil {
		return nil, err
	}
	return doc, nil
})

// documentRouter finds the operation of a request; the document's server
// ("/") is dropped so that any test host matches.
var documentRouter = sync.OnceValues(func() (routers.Router, error) {
	doc, err := loadDocument()
	if err != nil {
		return nil, err
	}
	d := *doc
	d.Servers = nil
	return gorillamux.NewRouter(&d)
})

// mustDocument returns the loaded document and its router.
func mustDocument(tb testing.TB) (*openapi3.T, routers.Router) {
	tb.Helper()
	doc, err := loadDocument()
	if err != nil {
		tb.Fatalf("api/openapi.yaml: %v", err)
	}
	r, err := documentRouter()
	if err != nil {
		tb.Fatalf("api/openapi.yaml: router: %v", err)
	}
	return doc, r
}

// checkExchange validates one request and the response the server gave it
// against the OpenAPI document, and fails tb on any disagreement:
//   - a response whose status the operation does not list, or whose body
//     the listed schema refuses (a field the document does not describe
//     included, wherever the schema says additionalProperties: false);
//   - a request the document calls invalid that the server did not refuse
//     with a 4xx status;
//   - a path or method the document lacks that the server did not answer
//     404 or 405 with the error envelope.
func checkExchange(tb testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	tb.Helper()
	doc, router := mustDocument(tb)
	if header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			tb.Errorf("openapi: %s %s: gzip body: %v", req.Method, req.URL, err)
			return
		}
		if body, err = io.ReadAll(zr); err != nil {
			tb.Errorf("openapi: %s %s: gzip body: %v", req.Method, req.URL, err)
			return
		}
	}
	// Every number of every answer has at most 15 significant digits
	// (CONTRACT: no float noise).
	if strings.HasPrefix(header.Get("Content-Type"), "application/json") {
		if rounded := jsonnum.Round(body); !bytes.Equal(rounded, body) {
			tb.Errorf("%s %s: a number has more than %d significant digits:\n%.2000s", req.Method, req.URL, jsonnum.Digits, body)
		}
	}
	// The router matches on a URL with a path only, as the server sees it:
	// each segment decoded once (%61 is a), an escaped slash kept within
	// its segment.
	r := req.Clone(context.Background())
	segs := strings.Split(req.URL.EscapedPath(), "/")
	for i, s := range segs {
		if u, err := url.PathUnescape(s); err == nil {
			segs[i] = url.PathEscape(u)
		}
	}
	r.URL = &url.URL{RawQuery: req.URL.RawQuery}
	r.URL.RawPath = strings.Join(segs, "/")
	r.URL.Path, _ = url.PathUnescape(r.URL.RawPath)
	r.Host = ""
	route, params, err := router.FindRoute(r)
	if err != nil {
		// No operation: the server must say so (404, 405), or refuse the
		// request before routing (400: a path that is not clean text).
		if status != http.StatusNotFound && status != http.StatusMethodNotAllowed && status != http.StatusBadRequest {
			tb.Errorf("openapi: %s %s is not in the document, but the server answered %d", req.Method, req.URL, status)
			return
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			tb.Errorf("openapi: %s %s: %d body is not JSON: %v", req.Method, req.URL, status, err)
			return
		}
		if err := doc.Components.Schemas["ErrorEnvelope"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			tb.Errorf("openapi: %s %s: %d body is not the error envelope: %v", req.Method, req.URL, status, err)
		}
		return
	}
	opts := &openapi3filter.Options{
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus: true,
		MultiError:            true,
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: params, Route: route, Options: opts}
	if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil && (status < 400 || status >= 500) {
		tb.Errorf("openapi: %s %s: the document calls the request invalid, but the server answered %d:\n%v",
			req.Method, req.URL, status, err)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status, Header: header, Options: opts}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		tb.Errorf("openapi: %s %s: the %d response disagrees with the document:\n%v\nbody: %.600s",
			req.Method, req.URL, status, err, body)
	}
}

// TestOpenAPIDocumentIsValid validates the document as OpenAPI 3.1 with
// kin-openapi, which also checks every schema and example.
func TestOpenAPIDocumentIsValid(t *testing.T) {
	t.Parallel()
	doc, _ := mustDocument(t)
	if !doc.IsOpenAPI31OrLater() {
		t.Fatalf("openapi: %q, want 3.1", doc.OpenAPI)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// docParam is a path parameter of the document, {name}, which the
// router writes :name.
var docParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestOpenAPIRouteParity checks that the document lists exactly the
// router's routes, method by method.
func TestOpenAPIRouteParity(t *testing.T) {
	t.Parallel()
	doc, _ := mustDocument(t)
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+docParam.ReplaceAllString(path, ":$1"))
		}
	}
	var routed []string
	for _, r := range server.Routes() {
		routed = append(routed, r[0]+" "+r[1])
	}
	sort.Strings(documented)
	sort.Strings(routed)
	for _, r := range routed {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in the document", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routed, d) {
			t.Errorf("the document lists %s, which no route serves", d)
		}
	}
}

// TestOpenAPIServed checks GET /api/v1/openapi.json: no key, the document
// as JSON.
func TestOpenAPIServed(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		r := get(t, h, "/api/v1/openapi.json", "")
		if r.status != http.StatusOK || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
			t.Fatalf("status %d, type %q", r.status, r.header.Get("Content-Type"))
		}
		want, err := api.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var w map[string]any
		json.Unmarshal(want, &w)
		if r.body["openapi"] != "3.1.0" || len(r.body["paths"].(map[string]any)) != len(w["paths"].(map[string]any)) {
			t.Errorf("served document: openapi %v, %d paths; want 3.1.0 and %d", r.body["openapi"],
				len(r.body["paths"].(map[string]any)), len(w["paths"].(map[string]any)))
		}
	})
}

// TestOpenAPIParamParity checks that every route's parameter struct and
// the document's parameters of the operation agree: the same names in the
// same places (path or query), the same required ones, types and formats
// (uuid, date). Enums, bounds and defaults that the struct declares must
// be the document's too; the document may state more, that a domain
// package checks (an order's side, an indicator's name).
func TestOpenAPIParamParity(t *testing.T) {
	t.Parallel()
	doc, _ := mustDocument(t)
	routeParam := regexp.MustCompile(`:([^/]+)`)
	for route, declared := range server.RouteParams() {
		method, pattern, _ := strings.Cut(route, " ")
		item := doc.Paths.Value(routeParam.ReplaceAllString(pattern, "{$1}"))
		if item == nil || item.GetOperation(method) == nil {
			continue // TestOpenAPIRouteParity reports it
		}
		documented := map[string]*openapi3.Parameter{}
		for _, ref := range slices.Concat(item.Parameters, item.GetOperation(method).Parameters) {
			if p := ref.Value; p.In == "query" || p.In == "path" {
				documented[p.In+" "+p.Name] = p
			}
		}
		for _, want := range declared {
			key := want.In + " " + want.Name
			got, ok := documented[key]
			if !ok {
				t.Errorf("%s: the route takes the %s parameter %s, which the document lacks", route, want.In, want.Name)
				continue
			}
			delete(documented, key)
			for _, d := range paramDiffs(want, got) {
				t.Errorf("%s: parameter %s: %s", route, want.Name, d)
			}
		}
		for key := range documented {
			t.Errorf("%s: the document lists the parameter %s, which the route does not take", route, key)
		}
	}
}

// paramDiffs returns how the document's parameter doc disagrees with the
// route's declared one.
func paramDiffs(want server.RouteParam, doc *openapi3.Parameter) []string {
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }
	if doc.Required != want.Required {
		add("required: the document says %v, the route %v", doc.Required, want.Required)
	}
	s := doc.Schema.Value
	if !s.Type.Is(want.Type) {
		add("type: the document says %v, the route %s", s.Type.Slice(), want.Type)
	}
	if want.Type == "array" {
		if s.Items == nil || !s.Items.Value.Type.Is(want.ItemType) {
			add("items: the route's are %s", want.ItemType)
		} else {
			s = s.Items.Value
		}
	}
	if (want.Format != "" || s.Format == "uuid" || s.Format == "date") && s.Format != want.Format {
		add("format: the document says %q, the route %q", s.Format, want.Format)
	}
	var enum []string
	for _, v := range s.Enum {
		enum = append(enum, fmt.Sprint(v))
	}
	if want.Enum != nil && !slices.Equal(enum, want.Enum) {
		add("enum: the document says %v, the route %v", enum, want.Enum)
	}
	bound := func(name, tag string, exclusive bool, inclusive *float64, excl openapi3.ExclusiveBound) {
		if tag == "" {
			return
		}
		docBound := inclusive
		if exclusive {
			docBound = excl.Value
		}
		if docBound == nil || fmt.Sprint(*docBound) != fmt.Sprint(mustFloat(tag)) {
			add("%s: the route's is %s (exclusive: %v), the document's is not", name, tag, exclusive)
		}
	}
	bound("minimum", want.Min, want.ExclusiveMin, s.Min, s.ExclusiveMin)
	bound("maximum", want.Max, want.ExclusiveMax, s.Max, s.ExclusiveMax)
	if want.Default != nil && fmt.Sprint(s.Default) != *want.Default && !(s.Default != nil && isNumber(*want.Default) &&
		fmt.Sprint(s.Default) == fmt.Sprint(mustFloat(*want.Default))) {
		add("default: the document says %v, the route %q", s.Default, *want.Default)
	}
	return diffs
}

// mustFloat returns s as a float64, or NaN.
func mustFloat(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return math.NaN()
	}
	return f
}

// isNumber reports whether s reads as a number.
func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}
