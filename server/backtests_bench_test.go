package server_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/dbtest"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/server"
)

// BenchmarkBacktestAPI measures POST /api/v1/backtests over 100 stored
// assets (the most a request may name) with 10 years of daily bars each,
// on both databases: reading the prices, running the strategy and buy and
// hold, encoding the result (about 2,500 days of equity and every trade)
// and storing it.
func BenchmarkBacktestAPI(b *testing.B) {
	dbtest.Each(b, func(b *testing.B, db *bun.DB) {
		ctx := context.Background()
		st := marketdata.NewStore(db)
		var symbols []string
		for i := range 100 {
			a := marketdata.Asset{ID: uuid.New(), Symbol: fmt.Sprintf("W%03d", i), Name: "Walk", Type: marketdata.Stock,
				ExchangeID: uuid.MustParse(nyseID), Currency: "USD", IsActive: true}
			if err := st.SaveAsset(ctx, &a); err != nil {
				b.Fatal(err)
			}
			if err := st.SavePrices(ctx, newWalk(a.ID, 2520, uint64(i)).prices); err != nil {
				b.Fatal(err)
			}
			symbols = append(symbols, a.Symbol)
		}
		key, _ := benchKey(b, db)
		h := server.New(server.Config{Logger: quietLogger(), Passwords: testPasswords}, db).Handler()
		path := "/api/v1/backtests?" + query("entry", "crossover(sma(close, 50), sma(close, 200))",
			"exit", "crossunder(sma(close, 50), sma(close, 200))", "maxPositions", "10", "stopLossPct", "10",
			"commissionBps", "5", "slippageBps", "5", "symbols", strings.Join(symbols, ","))
		benchIdentity(b, h, "POST", path, key)
	})
}
