package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

func TestGzip(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "gzip@example.com", "business")
		fetch := func(path, accept string) *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if accept != "" {
				req.Header.Set("Accept-Encoding", accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
			return rec
		}
		list := "/api/v1/market-data/prices/asset/" + widgID.String()
		plain := fetch(list, "")
		if plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("identity: %v", plain.Header())
		}
		for _, c := range []struct{ path, accept string }{
			{list, "gzip"}, {list, "deflate, gzip;q=0.5"}, {list, "br;q=1, *"},
			{list + "?from=" + calendar.DateOf(time.Now().UTC()).AddDays(-20).String(), "gzip"},                      // a range: gzipped per request
			{"/api/v1/indicators/asset/" + widgID.String() + "?indicator=SMA&params=%7B%22period%22%3A3%7D", "gzip"}, // a whole series: cached
			{"/api/v1/indicators/asset/" + widgID.String() + "?indicator=SMA&params=%7B%22period%22%3A3%7D", "gzip"}, // from the cache
		} {
			path, accept := c.path, c.accept
			if path != list {
				plain = fetch(path, "")
			}
			r := fetch(path, accept)
			if cl := r.Header().Get("Content-Length"); r.Header().Get("Content-Encoding") != "gzip" || cl != "" && cl != fmt.Sprint(r.Body.Len()) ||
				!strings.HasSuffix(r.Header().Get("ETag"), `-gzip"`) {
				t.Fatalf("%s: %v", accept, r.Header())
			}
			zipped := r.Body.Len()
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(body, plain.Body.Bytes()) {
				t.Errorf("%s: the gzip body decodes to %d bytes, not the %d of identity (%v)", accept, len(body), plain.Body.Len(), err)
			}
			t.Logf("%d bytes, %d gzipped", plain.Body.Len(), zipped)
			// The gzip form's own ETag is matched by a conditional request.
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Accept-Encoding", accept)
			req.Header.Set("If-None-Match", r.Header().Get("ETag"))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			checkExchange(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
			if rec.Code != 304 {
				t.Errorf("%s: If-None-Match with the gzip ETag: %d", path, rec.Code)
			}
		}
		for _, c := range []struct{ path, accept string }{
			{list, "gzip;q=0"}, {list, "identity"}, {list, "*;q=0"},
			{"/api/v1/market-data/prices/asset/" + widgID.String() + "/latest", "gzip"}, // below the threshold
		} {
			if r := fetch(c.path, c.accept); r.Header().Get("Content-Encoding") != "" || r.Code != 200 {
				t.Errorf("%s with %q: %d %v", c.path, c.accept, r.Code, r.Header())
			}
		}
	})
}
