package server_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// query encodes name-value pairs as a query string.
func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v.Encode()
}

// wantInvalid fails unless r is a 400 VALIDATION_ERROR naming field.
func wantInvalid(tb testing.TB, what string, r response, field string) {
	tb.Helper()
	if r.status != http.StatusBadRequest || r.errorCode() != "VALIDATION_ERROR" ||
		len(r.errorFields()) != 1 || r.errorFields()[0] != field {
		tb.Errorf("%s: %d %s, want 400 VALIDATION_ERROR naming %s", what, r.status, r.raw, field)
	}
}

// TestPathControlBytes checks that a path holding control characters or
// bytes that are not UTF-8 is refused with a 400 before routing: bunrouter
// v1.0.23 panics on a NUL at the end of a path.
func TestPathControlBytes(t *testing.T) {
	t.Parallel()
	var log strings.Builder
	var mu sync.Mutex
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, &log}, nil))}, db).Handler()
	key := mustKey(t, db, "path@example.com", "pro")
	for _, path := range []string{
		"/healthz%00",
		"/api/v1/knowledge/blog/posts/%00",
		"/api/v1/market-data/assets/symbol/%00",
		"/api/v1/market-data/assets/symbol/AC%0AME",
		"/api/v1/market-data/assets/symbol/%7F",
		"/api/v1/market-data/assets/symbol/%C2%85", // NEL, a C1 control
		"/api/v1/market-data/assets/symbol/%FF",
		"/api/v1/market-data/assets/%00/profile",
	} {
		for _, k := range []string{"", key} {
			wantInvalid(t, path, get(t, h, path, k), "path")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Contains(log.String(), "panic") {
		t.Errorf("the log holds a panic:\n%.2000s", log.String())
	}
}

// TestPathEscapes checks that a path parameter decodes once, to the same
// text however it was escaped, and that nothing is trimmed.
func TestPathEscapes(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "escapes@example.com", "pro")
		const base = "/api/v1/market-data/assets/symbol/"
		for _, sym := range []string{"ZETA-USD", "ZETA%2DUSD", "%5AETA-USD", "zeta%2dusd", "%5a%45%54%41%2d%55%53%44"} {
			r := get(t, h, base+sym, key)
			if r.status != 200 || r.object(t)["id"] != mdIDs.zeta.String() {
				t.Errorf("GET %s: %d %s, want ZETA-USD", sym, r.status, r.raw)
			}
		}
		for _, sym := range []string{"ACME%20", "%20ACME", "ACME%09", "AC%2FME", "ACME%2F"} {
			if r := get(t, h, base+sym, key); r.status == 200 {
				t.Errorf("GET %s found %s; nothing may be trimmed or split", sym, r.raw)
			}
		}
		// An escaped slash stays inside its segment: one parameter, not
		// two segments (which would be "no route").
		if r := get(t, h, base+"AC%2FME", key); r.errorCode() != "NOT_FOUND" || !strings.Contains(r.errorMessage(), `"AC/ME"`) {
			t.Errorf("GET AC%%2FME: %d %s, want the asset \"AC/ME\" not found", r.status, r.raw)
		}
		if r := get(t, h, "/api/v1/market-data/%61ssets/"+mdIDs.acme.String(), key); r.status != 200 {
			t.Errorf("an escaped letter in a fixed segment: %d %s", r.status, r.raw)
		}
	})
}

// TestParamControlChars checks that text parameters holding control
// characters are refused with a 400 naming them, rather than stored
// otherwise than sent.
func TestParamControlChars(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "params@example.com", "pro")
		const custom = "/api/v1/indicators/custom?"
		for _, c := range []struct{ method, path, field string }{
			{"POST", custom + "name=n%00ul&formula=close", "name"},
			{"POST", custom + query("name", "a\nb", "formula", "close"), "name"},
			{"POST", custom + query("name", "ok", "formula", "close\x00"), "formula"},
			{"POST", custom + query("name", "ok", "formula", "close", "description", "x\x1by"), "description"},
			{"POST", custom + "name=%FF&formula=close", "name"},
			{"GET", "/api/v1/market-data/assets?type=stock%00", "type"},
			{"GET", "/api/v1/market-data/assets?ty%01pe=stock", "ty\x01pe"},
			{"GET", "/api/v1/knowledge/blog/posts?category=%E2%80%8Fx%C2%9B", "category"}, // U+009B, a C1 control
		} {
			wantInvalid(t, c.method+" "+c.path, send(t, h, c.method, c.path, key), c.field)
		}
		if r := get(t, h, "/api/v1/market-data/assets?type=stock&x=%zz", key); r.errorCode() != "VALIDATION_ERROR" ||
			!strings.Contains(r.errorMessage(), "query") {
			t.Errorf("malformed query: %d %s", r.status, r.raw)
		}
		// Tabs and line breaks are text in a formula and a description.
		r := send(t, h, "POST", custom+query("name", "Multi line", "formula", "close -\n\tsma(close, 3)", "description", "line 1\r\nline 2"), key)
		if r.status != 200 {
			t.Fatalf("a multi-line formula: %d %s", r.status, r.raw)
		}
		list := get(t, h, "/api/v1/indicators/custom", key).list(t)
		if len(list) != 1 || list[0]["name"] != "Multi line" || list[0]["formula"] != "close -\n\tsma(close, 3)" ||
			list[0]["description"] != "line 1\r\nline 2" {
			t.Errorf("stored %v", list)
		}
	})
}

// TestEchoCapped checks that an error quoting what the client sent quotes
// at most 64 characters of it.
func TestEchoCapped(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	key := mustKey(t, db, "echo@example.com", "pro")
	huge := strings.Repeat("A", 900<<10)
	for _, path := range []string{
		"/api/v1/market-data/assets/symbol/" + huge,
		"/api/v1/" + huge,
		"/api/v1/market-data/assets/" + huge,
		"/api/v1/market-data/prices/asset/" + mdIDs.acme.String() + "?from=" + huge,
		"/api/v1/market-data/industries?level=" + huge,
		"/api/v1/knowledge/blog/posts/" + huge,
		"/api/v1/indicators/asset/" + mdIDs.acme.String() + "?indicator=" + huge,
		"/api/v1/indicators/asset/" + mdIDs.acme.String() + "/multi-timeframe?indicators=RSI_14&timeframes=" + huge,
	} {
		r := get(t, h, path, key)
		if r.status < 400 || len(r.raw) > 600 || !strings.Contains(r.raw, strings.Repeat("A", 50)) || !strings.Contains(r.raw, `\"…`) {
			t.Errorf("GET %.60s…: %d, %d bytes: %.300s", path, r.status, len(r.raw), r.raw)
		}
	}
}

// TestRequestBodyRefused checks that a body sent to the API, which takes
// its parameters in the query string, is refused instead of ignored.
func TestRequestBodyRefused(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	key := mustKey(t, db, "body@example.com", "pro")
	req := httptest.NewRequest("POST", "/api/v1/indicators/custom", strings.NewReader(`{"name":"x","formula":"close"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code != 400 || !strings.Contains(rec.Body.String(), "query string") {
		t.Errorf("POST with a JSON body: %d %s", rec.Code, rec.Body)
	}
	if got := get(t, h, "/api/v1/indicators/custom", key).list(t); len(got) != 0 {
		t.Errorf("the body's indicator was created: %v", got)
	}
}

// TestHeadersTooLarge checks that oversized headers are refused in the
// JSON envelope.
func TestHeadersTooLarge(t *testing.T) {
	t.Parallel()
	db := dbtest.SQLite(t)
	h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
	req := httptest.NewRequest("GET", "/healthz", nil)
	req.Header.Set("X-Filler", strings.Repeat("x", 100<<10))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code != http.StatusRequestHeaderFieldsTooLarge || !strings.Contains(rec.Body.String(), `"error":{"code":"VALIDATION_ERROR"`) {
		t.Errorf("100 KB header: %d %s", rec.Code, rec.Body)
	}
}
