package server_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

func TestGzip(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustOrderAssets(t, db)
		h := server.New(server.Config{Logger: quietLogger()}, db).Handler()
		key := mustKey(t, db, "gzip@example.com", "business")
		fetch := func(path, accept string) *httptest.ResponseRecorder {
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("Authorization", "Bearer "+key)
			if accept != "" {
				req.Header.Set("Accept-Encoding", accept)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec
		}
		list := "/api/v1/market-data/prices/asset/" + widgID.String()
		plain := fetch(list, "")
		if plain.Header().Get("Content-Encoding") != "" || plain.Header().Get("Vary") != "Accept-Encoding" {
			t.Errorf("identity: %v", plain.Header())
		}
		for _, accept := range []string{"gzip", "deflate, gzip;q=0.5", "br;q=1, *"} {
			r := fetch(list, accept)
			if r.Header().Get("Content-Encoding") != "gzip" || r.Header().Get("Content-Length") != "" {
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
