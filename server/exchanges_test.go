package server_test

import (
	"testing"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/server"
)

// TestExchangeAbsentValuesAreNull checks that the CRYPTO venue, which has
// no country and no MIC, answers null for both rather than "", in the
// list, by id and by symbol; and that an exchange that has them keeps them.
func TestExchangeAbsentValuesAreNull(t *testing.T) {
	t.Parallel()
	dbtest.Each(t, func(t *testing.T, db *bun.DB) {
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		key := mustKey(t, db, "exchanges@example.com", "pro")

		var fromList map[string]any
		for _, e := range get(t, h, "/api/v1/market-data/exchanges", key).list(t) {
			if e["symbol"] == "CRYPTO" {
				fromList = e
			}
		}
		if fromList == nil {
			t.Fatal("no CRYPTO exchange in the list")
		}
		for _, tt := range []struct {
			name string
			e    map[string]any
		}{
			{"list", fromList},
			{"by id", get(t, h, "/api/v1/market-data/exchanges/"+cryptoID, key).object(t)},
			{"by symbol", get(t, h, "/api/v1/market-data/exchanges/symbol/crypto", key).object(t)},
		} {
			for _, k := range []string{"country", "mic"} {
				v, ok := tt.e[k]
				if !ok || v != nil {
					t.Errorf("%s: CRYPTO %s = %#v (present %v), want null", tt.name, k, v, ok)
				}
			}
		}

		nyse := get(t, h, "/api/v1/market-data/exchanges/"+nyseID, key).object(t)
		if nyse["country"] != "US" || nyse["mic"] != "XNYS" {
			t.Errorf("NYSE country %#v, mic %#v, want \"US\" and \"XNYS\"", nyse["country"], nyse["mic"])
		}
	})
}
