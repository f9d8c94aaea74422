package server_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
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
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger()}, db).Handler()
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
