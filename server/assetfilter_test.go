package server_test

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestAssetListFilters checks the optional type, exchange and q filters
// of GET /api/v1/market-data/assets (CONTRACT, additions of 2026-11-29):
// each narrows the list, they combine, none gives the whole list, and a
// bad value is a 400 naming its parameter.
func TestAssetListFilters(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: func() time.Time { return mdNow }}, db).Handler()
		key := mustKey(t, db, "filters@example.com", "business")
		tests := []struct {
			name, query string
			want        []string // symbols, in order
		}{
			{"none", "", []string{"ACME", "BOLT", "CORE", "ZETA-USD"}},
			{"type", "type=crypto", []string{"ZETA-USD"}},
			{"type without assets", "type=etf", []string{}},
			{"exchange by symbol", "exchange=NASDAQ", []string{"BOLT", "CORE"}},
			{"exchange symbol in another case", "exchange=nyse", []string{"ACME"}},
			{"exchange by id", "exchange=" + cryptoID, []string{"ZETA-USD"}},
			{"symbol prefix", "q=ze", []string{"ZETA-USD"}},
			{"name prefix, any case", "q=ACME%20W", []string{"ACME"}},
			{"name prefix of a later word does not match", "q=Widgets", []string{}},
			{"symbol or name", "q=c", []string{"CORE"}},
			{"combined", "type=stock&exchange=NASDAQ&q=bo", []string{"BOLT"}},
			{"combined, nothing left", "type=crypto&exchange=NASDAQ", []string{}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				r := get(t, h, "/api/v1/market-data/assets?"+tt.query, key)
				if r.status != 200 {
					t.Fatalf("status %d: %s", r.status, r.raw)
				}
				got := []string{}
				for _, a := range r.body["data"].([]any) {
					got = append(got, a.(map[string]any)["symbol"].(string))
				}
				if !slices.Equal(got, tt.want) {
					t.Errorf("symbols %q, want %q", got, tt.want)
				}
			})
		}

		bad := []struct {
			name, query, param, msg string
		}{
			{"unknown type", "type=bond", "type", "type: must be stock, etf, fx, crypto or commodity"},
			{"unknown exchange", "exchange=MOON", "exchange", `exchange: no exchange is named "MOON"; GET /api/v1/market-data/exchanges lists them`},
			{"unknown exchange id", "exchange=" + mdIDs.acme.String(), "exchange", "exchange: no exchange is named"},
			{"long q", "q=" + strings.Repeat("a", 101), "q", "q: is 101 characters long; at most 100 are allowed"},
		}
		for _, tt := range bad {
			t.Run(tt.name, func(t *testing.T) {
				r := get(t, h, "/api/v1/market-data/assets?"+tt.query, key)
				wantInvalid(t, tt.name, r, tt.param)
				if !strings.HasPrefix(r.errorMessage(), tt.msg) {
					t.Errorf("message %q, want it to start with %q", r.errorMessage(), tt.msg)
				}
			})
		}
	})
}

// TestNilUUID checks that the nil UUID, in a path or a query parameter,
// is a 400 that names the parameter and says what is wrong with it,
// rather than a lookup of an id that no resource can have.
func TestNilUUID(t *testing.T) {
	t.Parallel()
	const nilID = "00000000-0000-0000-0000-000000000000"
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		mustMarketData(t, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords, Now: func() time.Time { return mdNow }}, db).Handler()
		key := mustKey(t, db, "nil@example.com", "business")
		for _, tt := range []struct{ path, param string }{
			{"/api/v1/market-data/assets/" + nilID, "id"},
			{"/api/v1/market-data/assets/" + nilID + "/profile", "id"},
			{"/api/v1/indicators/asset/" + nilID + "/summary", "assetId"},
			{"/api/v1/market-data/indexes/" + mdIDs.index.String() + "/assets", ""}, // a real id still works
			{"/api/v1/brokers/orders?" + url.Values{"connectionId": {nilID}, "assetId": {mdIDs.acme.String()},
				"side": {"buy"}, "type": {"market"}, "quantity": {"1"}}.Encode(), "connectionId"},
		} {
			method := "GET"
			if strings.HasPrefix(tt.path, "/api/v1/brokers/orders") {
				method = "POST"
			}
			r := send(t, h, method, tt.path, key)
			if tt.param == "" {
				if r.status != 200 {
					t.Errorf("%s: %d %s", tt.path, r.status, r.raw)
				}
				continue
			}
			wantInvalid(t, tt.path, r, tt.param)
			want := fmt.Sprintf("%s: is the nil UUID %s, which no resource has; give an id such as ", tt.param, nilID)
			if !strings.HasPrefix(r.errorMessage(), want) {
				t.Errorf("%s: message %q, want it to start with %q", tt.path, r.errorMessage(), want)
			}
		}
	})
}
