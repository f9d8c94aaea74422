package connect

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/indicators"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// quote is what the guardrails know of an asset's market: its latest
// stored close on or before a day, and its ATR(14), zero when unknown.
type quote struct {
	version int64 // the asset's price version it was computed from
	day     calendar.Date
	price   decimal.Decimal
	atr     decimal.Decimal
	ok      bool // the asset has a close on or before day
}

// quotes keeps the quote of each asset per price version, so that an
// order reads an ATR(14) computed once per change of the asset's prices,
// not once per order. It is safe for concurrent use.
type quotes struct {
	// version reads a price version on PostgreSQL outside a transaction,
	// where it may answer from memory. Inside one, and on SQLite, the
	// version is read through the transaction given to get: a read through
	// the pool inside a transaction that holds a lock could wait for a
	// connection that every waiter for that lock holds.
	version func(ctx context.Context, assetID uuid.UUID) (marketdata.PriceVersion, error)

	mu sync.Mutex
	m  map[uuid.UUID]quote
}

// get returns the asset's quote on day: from memory while the asset's
// price version and the day are those it was computed for, else read and
// computed again.
func (q *quotes) get(ctx context.Context, db bun.IDB, assetID uuid.UUID, day calendar.Date) (quote, error) {
	md := marketdata.NewStore(db)
	version := md.PriceVersion
	if !database.InTx(db) && db.Dialect().Name() == dialect.PG {
		version = q.version
	}
	v, err := version(ctx, assetID)
	if err != nil {
		return quote{}, err
	}
	return q.at(ctx, db, assetID, v.Version, day)
}

// at returns the asset's quote on day at its price version version, which
// the caller read: from memory when it was computed for them, else read
// through db and computed.
func (q *quotes) at(ctx context.Context, db bun.IDB, assetID uuid.UUID, version int64, day calendar.Date) (quote, error) {
	q.mu.Lock()
	c, ok := q.m[assetID]
	q.mu.Unlock()
	if ok && c.version == version && c.day == day {
		return c, nil
	}
	c = quote{version: version, day: day}
	var err error
	if c.price, c.atr, c.ok, err = market(ctx, marketdata.NewStore(db), assetID, day); err != nil {
		return quote{}, err
	}
	q.mu.Lock()
	if cur, ok := q.m[assetID]; !ok || cur.version <= c.version {
		q.m[assetID] = c
	}
	q.mu.Unlock()
	return c, nil
}

// market returns the latest stored close of the asset, on or before
// today, and its ATR(14) over the past atrHistory days (zero when fewer
// than 15 closes are stored), rounded to atrPlaces; ok is false when the
// asset has no close.
func market(ctx context.Context, md *marketdata.Store, assetID uuid.UUID, today calendar.Date) (price, atr decimal.Decimal, ok bool, err error) {
	bars, err := md.Prices(ctx, assetID, today.AddDays(-atrHistory), today)
	if err != nil {
		return decimal.Decimal{}, decimal.Decimal{}, false, err
	}
	if len(bars) == 0 {
		last, err := md.LatestPrice(ctx, assetID)
		if errors.Is(err, tradekit.ErrNotFound) {
			return decimal.Decimal{}, decimal.Decimal{}, false, nil
		}
		if err != nil {
			return decimal.Decimal{}, decimal.Decimal{}, false, err
		}
		if last.Date.After(today) {
			return decimal.Decimal{}, decimal.Decimal{}, false, nil
		}
		return last.Close, decimal.Decimal{}, true, nil
	}
	price = bars[len(bars)-1].Close
	if len(bars) <= atrPeriod {
		return price, decimal.Decimal{}, true, nil
	}
	high, low, cl := make([]float64, len(bars)), make([]float64, len(bars)), make([]float64, len(bars))
	for i, b := range bars {
		high[i], low[i], cl[i] = b.High.InexactFloat64(), b.Low.InexactFloat64(), b.Close.InexactFloat64()
	}
	v := indicators.ATR(high, low, cl, atrPeriod)
	if last := v[len(v)-1]; !math.IsNaN(last) && !math.IsInf(last, 0) {
		atr = decimal.NewFromFloat(last).Round(atrPlaces)
	}
	return price, atr, true, nil
}
