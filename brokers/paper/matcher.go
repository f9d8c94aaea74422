package paper

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// The regular pass of the matcher ([Broker.Run]'s, every
// Config.MatchInterval) visits only the open orders that may have
// changed since the pass before. An open order changes state only when:
//
//   - its asset's latest close moves, which changes the asset's price
//     version (a fill, a stop's trigger, a trailing stop's mark; the bar
//     an opg or cls order waits for);
//   - it is new: placed, a replacement, or a leg its parent's fill opened
//     (ioc and fok orders are cancelled at their first look);
//   - the clock passes an open or a close of NYSE's sessions, the time of
//     the opg and cls auctions.
//
// Paper orders never expire, and an order that can fill at its close
// fills or is rejected at the first look, so nothing else changes one.
// A pass therefore reads the price versions of the assets that have open
// orders (one query, a loose index scan whose cost grows with the number
// of such assets, not with the orders), then the open orders of the
// assets whose version moved, the open orders opened or changed since
// the pass before (less recentOverlap), and the open opg and cls orders
// when the clock passed an auction. With prices and clock still, a pass
// is two indexed queries that return nothing new.

// recentOverlap is how far before the start of the previous regular pass
// a pass looks for orders opened or changed: an order's updated_at is
// taken before its transaction commits, and on another instance, so a
// pass looks back that much further.
const recentOverlap = 10 * time.Second

// sweepEvery is how often a regular pass visits every open order anyway,
// as a safety net (an order placed through an instance that stopped
// before it matched it, with a clock more than recentOverlap behind). It
// is counted in passes of Config.MatchInterval, so that a clock that
// jumps (a test's) does not make every pass a full one.
const sweepEvery = 5 * time.Minute

// maxAuctionScan bounds the days auctionBetween looks through: a longer
// gap between passes counts as passing an auction.
const maxAuctionScan = 14

// matchState is what the regular passes of the matcher remember between
// them.
type matchState struct {
	mu sync.Mutex
	// seen holds, for each asset with open orders at the last pass, the
	// price version at which its open orders were matched; nil before the
	// first pass, which visits every open order.
	seen   map[uuid.UUID]int64
	since  time.Time // the clock at the start of the last pass
	passes int       // the passes since the last full one
}

// assetVersion is an asset with open orders and its price version.
type assetVersion struct {
	ID      uuid.UUID `bun:"id"`
	Version int64     `bun:"prices_version"`
}

// openAssetsQuery reads the assets with open orders and their price
// versions: a loose index scan of paper_orders_open_asset_idx (one index
// probe per asset, however many orders each has), joined to the assets
// ([marketdata.AssetVersionsOf]).
var openAssetsQuery = `WITH RECURSIVE open_assets(id) AS (
	SELECT (SELECT asset_id FROM paper_orders WHERE status = 'new' AND asset_id IS NOT NULL ORDER BY asset_id LIMIT 1)
	UNION ALL
	SELECT (SELECT asset_id FROM paper_orders WHERE status = 'new' AND asset_id > open_assets.id ORDER BY asset_id LIMIT 1)
	FROM open_assets WHERE open_assets.id IS NOT NULL
)
` + marketdata.AssetVersionsOf("open_assets", "open_assets.id")

// openAssets returns the assets with open orders and their price
// versions.
func openAssets(ctx context.Context, db bun.IDB) ([]assetVersion, error) {
	var out []assetVersion
	if err := db.NewRaw(openAssetsQuery).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("paper: the assets with open orders: %w", err)
	}
	return out, nil
}

// assetChunk is the most asset ids one read of openOrdersOfAssets names.
const assetChunk = 500

// openOrdersOfAssets returns the open orders on the assets ids.
func openOrdersOfAssets(ctx context.Context, db bun.IDB, ids []uuid.UUID) ([]order, error) {
	var out []order
	for chunk := range slices.Chunk(ids, assetChunk) {
		var rows []order
		if err := db.NewSelect().Model(&rows).Where("status = 'new' AND asset_id IN (?)", bun.In(chunk)).Scan(ctx); err != nil {
			return nil, fmt.Errorf("paper: the open orders of %d assets: %w", len(chunk), err)
		}
		out = append(out, rows...)
	}
	return out, nil
}

// openOrdersUpdatedSince returns the open orders opened or changed at
// or after t, by paper_orders_open_updated_idx.
func openOrdersUpdatedSince(ctx context.Context, db bun.IDB, t time.Time) ([]order, error) {
	var out []order
	if err := db.NewSelect().Model(&out).Where("status = 'new' AND updated_at >= ?", t.UTC()).Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: the open orders changed since %s: %w", t.Format(time.RFC3339Nano), err)
	}
	return out, nil
}

// openAuctionOrders returns the open opg and cls orders, by
// paper_orders_open_auction_idx (whose predicate the query repeats).
func openAuctionOrders(ctx context.Context, db bun.IDB) ([]order, error) {
	var out []order
	if err := db.NewSelect().Model(&out).Where("status = 'new' AND time_in_force IN ('opg', 'cls')").Scan(ctx); err != nil {
		return nil, fmt.Errorf("paper: the open opg and cls orders: %w", err)
	}
	return out, nil
}

// auctionBetween reports whether an open or a close of NYSE's regular
// sessions, the times of the opg and cls auctions, falls in (from, to].
// A gap of more than maxAuctionScan days counts as passing one.
func auctionBetween(from, to time.Time) (bool, error) {
	if !from.Before(to) {
		return false, nil
	}
	if to.Sub(from) > maxAuctionScan*24*time.Hour {
		return true, nil
	}
	cal, loc, err := nyse()
	if err != nil {
		return false, err
	}
	f, l := from.In(loc), to.In(loc)
	last := calendar.NewDate(l.Year(), l.Month(), l.Day())
	for d := calendar.NewDate(f.Year(), f.Month(), f.Day()); !d.After(last); d = d.AddDays(1) {
		open, close, ok := session(cal, loc, d)
		if !ok {
			continue
		}
		for _, at := range []time.Time{open, close} {
			if at.After(from) && !at.After(to) {
				return true, nil
			}
		}
	}
	return false, nil
}

// matchChanged is the regular pass of [Broker.Run]: [Broker.Match] over
// the open orders that may have changed since the last regular pass (see
// the comment at the top of this file), and over every open order at the
// first pass and every sweepEvery. It remembers what it saw only when
// the pass succeeds, so that a failed pass is done again in full.
func (b *Broker) matchChanged(ctx context.Context) (int, error) {
	m := &b.matching
	m.mu.Lock()
	defer m.mu.Unlock()
	start := b.clock()
	full := m.seen == nil || start.Before(m.since) || m.passes >= max(1, int(sweepEvery/b.matchEvery))
	versions, err := openAssets(ctx, b.db)
	if err != nil {
		return 0, err
	}
	seen := make(map[uuid.UUID]int64, len(versions))
	var moved []uuid.UUID
	for _, v := range versions {
		seen[v.ID] = v.Version
		if old, ok := m.seen[v.ID]; full || !ok || old != v.Version {
			moved = append(moved, v.ID)
		}
	}
	open, err := openOrdersOfAssets(ctx, b.db, moved)
	if err != nil {
		return 0, err
	}
	if !full {
		recent, err := openOrdersUpdatedSince(ctx, b.db, m.since.Add(-recentOverlap))
		if err != nil {
			return 0, err
		}
		open = append(open, recent...)
		passed, err := auctionBetween(m.since, start)
		if err != nil {
			return 0, err
		}
		if passed {
			auctions, err := openAuctionOrders(ctx, b.db)
			if err != nil {
				return 0, err
			}
			open = append(open, auctions...)
		}
	}
	closes := map[uuid.UUID]*decimal.Decimal{} // nil: no close
	filled, again, err := b.matchEach(ctx, closes, open)
	if err == nil && again {
		// The legs that fills opened, at the closes their parents met.
		var legs []order
		if legs, err = openOrdersUpdatedSince(ctx, b.db, start); err == nil {
			var n int
			n, _, err = b.matchEach(ctx, closes, legs)
			filled += n
		}
	}
	if err != nil {
		return filled, err
	}
	m.seen, m.since, m.passes = seen, start, m.passes+1
	if full {
		m.passes = 0
	}
	return filled, nil
}

// matchEach is [Broker.matchOrders] over the orders os, each once, in
// the order they were placed, matchBatch at a time.
func (b *Broker) matchEach(ctx context.Context, closes map[uuid.UUID]*decimal.Decimal, os []order) (filled int, again bool, err error) {
	slices.SortFunc(os, func(x, y order) int {
		if c := byPlacement(x, y); c != 0 {
			return c
		}
		return strings.Compare(x.ID.String(), y.ID.String())
	})
	os = slices.CompactFunc(os, func(x, y order) bool { return x.ID == y.ID })
	for batch := range slices.Chunk(os, matchBatch) {
		n, a, err := b.matchOrders(ctx, closes, batch)
		filled, again = filled+n, again || a
		if err != nil {
			return filled, again, err
		}
	}
	return filled, again, nil
}
