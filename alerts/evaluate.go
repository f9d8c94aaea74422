package alerts

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/driver/pgdriver"

	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
)

// MaxNewBars bounds the new bars one evaluation of an alert looks at: of
// a larger batch (a backfill of years), only the latest MaxNewBars are
// evaluated and the older ones are passed over, so that a history
// imported at once cannot fire an alert hundreds of times.
const MaxNewBars = 5

// candidate is an active alert whose asset's prices changed since it was
// last evaluated.
type candidate struct {
	Alert        `bun:",extend"`
	AssetVersion int64 `bun:"asset_version"`
}

// firingAt is a bar on which an alert's condition holds.
type firingAt struct {
	date  string
	close float64
}

const (
	// evalBatch bounds the alerts whose outcomes one transaction of a
	// pass records, and the rows of one statement.
	evalBatch = 1000
	// evalAssets is how many assets' bars a pass reads at once.
	evalAssets = 100
)

// outcome is what evaluating a candidate gave: the watermark to move it
// to and the bars it fires on (none: it stays quiet).
type outcome struct {
	c       candidate
	version int64
	through string // "" when the asset has no bars
	at      []firingAt
}

// evaluate runs one evaluation pass: every active alert whose asset's
// prices changed since its watermark is evaluated on the bars after the
// watermark, fires on each bar where its condition holds (the first only,
// for a once alert), and has its watermark moved to the latest bar. It
// returns the number of firings. Passes of any number of Services may
// run at once: each firing happens once.
//
// The bars of evalAssets assets are read at once (see
// marketdata.Store.PriceColumnsOf), each distinct condition is parsed
// once per pass and evaluated once per asset, and the outcomes are
// recorded in batches of evalBatch alerts, one transaction each (see
// [Service.record]).
func (s *Service) evaluate(ctx context.Context) (int, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	var cands []candidate
	err := s.db.NewSelect().Model(&cands).ColumnExpr("alert.*, a.symbol, a.prices_version AS asset_version").
		Join("JOIN assets AS a ON a.id = alert.asset_id").
		Where("alert.status = ? AND a.prices_version > alert.checked_version", Active).
		OrderExpr("alert.asset_id, alert.id").Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("alerts: evaluate: %w", err)
	}
	exprs := map[string]*formula.Expr{} // parsed conditions; nil for one that does not parse
	fired := 0
	var outs []outcome
	flush := func() error {
		n, err := s.record(ctx, outs)
		fired += n
		outs = outs[:0]
		return err
	}
	// The candidates of each asset, in batches of evalAssets assets whose
	// bars are read at once.
	var groups [][]candidate
	for start := 0; start < len(cands); {
		end := start
		for end < len(cands) && cands[end].AssetID == cands[start].AssetID {
			end++
		}
		groups = append(groups, cands[start:end])
		start = end
	}
	md := marketdata.NewStore(s.db)
	for batch := range slices.Chunk(groups, evalAssets) {
		ids := make([]uuid.UUID, len(batch))
		for i, g := range batch {
			ids[i] = g[0].AssetID
		}
		bars, err := md.PriceColumnsOf(ctx, ids)
		if err != nil {
			return fired, fmt.Errorf("alerts: bars: %w", err)
		}
		for _, g := range batch {
			b, ok := bars[g[0].AssetID]
			if !ok {
				continue // the asset is gone
			}
			outs = append(outs, evaluateAsset(g, b, exprs)...)
			if len(outs) >= evalBatch {
				if err := flush(); err != nil {
					return fired, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return fired, err
	}
	if fired > 0 {
		s.wakeDeliveries()
	}
	return fired, nil
}

// evaluateAsset evaluates the candidate alerts of one asset on its bars.
func evaluateAsset(cands []candidate, b marketdata.VersionedColumns, exprs map[string]*formula.Expr) []outcome {
	bars := b.Bars
	last := ""
	if n := len(bars.Dates); n > 0 {
		last = bars.Dates[n-1].String()
	}
	values := map[string][]float64{} // by condition: alerts that share one evaluate it once
	outs := make([]outcome, 0, len(cands))
	for _, c := range cands {
		if b.Version <= c.CheckedVersion {
			continue // read before a newer pass moved it on
		}
		o := outcome{c: c, version: b.Version, through: last}
		if last != "" {
			vals, ok := values[c.Condition]
			if !ok {
				vals = evalCondition(exprs, c.Condition, bars)
				values[c.Condition] = vals
			}
			o.at = firings(bars, vals, c.CheckedThrough, c.Once)
		}
		outs = append(outs, o)
	}
	return outs
}

// evalCondition evaluates cond over bars, parsing it once per pass into
// exprs; nil when it does not parse or evaluate (a condition stored
// before the language changed), which never fires.
func evalCondition(exprs map[string]*formula.Expr, cond string, bars ohlcv.Series) []float64 {
	e, ok := exprs[cond]
	if !ok {
		e, _ = formula.Parse(cond)
		exprs[cond] = e
	}
	if e == nil {
		return nil
	}
	vals, err := e.Eval(bars)
	if err != nil {
		return nil
	}
	return vals
}

// firings returns the bars after the date through (YYYY-MM-DD; "" for
// none), at most the latest MaxNewBars of them, on which vals holds: is
// defined and not zero. For a once alert only the first.
func firings(bars ohlcv.Series, vals []float64, through string, once bool) []firingAt {
	first := len(bars.Dates)
	for first > 0 && bars.Dates[first-1].String() > through {
		first--
	}
	first = max(first, len(bars.Dates)-MaxNewBars)
	var at []firingAt
	for i := first; i < len(vals) && i < len(bars.Dates); i++ {
		if math.IsNaN(vals[i]) || vals[i] == 0 {
			continue
		}
		at = append(at, firingAt{date: bars.Dates[i].String(), close: bars.Close[i]})
		if once {
			break
		}
	}
	return at
}

// watermark is a group of alerts whose watermarks move alike: from the
// same version (for firings) to the same version and bar date, with the
// same number of firings.
type watermark struct {
	from, version int64
	through       string
	once          bool
	fired         int
}

// record writes the outcomes of a pass in one transaction and returns the
// number of firings it recorded. Alerts that fire are claimed by moving
// their watermarks from the values the pass read to the new ones (an
// UPDATE … WHERE checked_version = old … RETURNING id, one per group of
// alerts alike, which only one of several concurrent passes can win);
// only the claimed ones get their notifications (kind "alert"), firing
// rows (whose primary key refuses a second firing for a bar) and webhook
// deliveries, inserted in bulk. Quiet alerts have their watermarks moved
// forward, never backwards, one statement per group alike.
func (s *Service) record(ctx context.Context, outs []outcome) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	now := s.clock()
	quiet, firing := map[watermark][]uuid.UUID{}, map[watermark][]uuid.UUID{}
	byID := map[uuid.UUID]*outcome{}
	for i := range outs {
		o := &outs[i]
		if len(o.at) == 0 {
			k := watermark{version: o.version, through: o.through}
			quiet[k] = append(quiet[k], o.c.ID)
			continue
		}
		k := watermark{from: o.c.CheckedVersion, version: o.version, through: o.through, once: o.c.Once, fired: len(o.at)}
		firing[k] = append(firing[k], o.c.ID)
		byID[o.c.ID] = o
	}
	fired := 0
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		fired = 0
		var claimed []*outcome
		// Groups in one order, and alerts in the pass's, so that concurrent
		// passes lock alike rows in the same order.
		for _, k := range sortedKeys(firing) {
			ids := firing[k]
			status := Active
			if k.once {
				status = Triggered
			}
			for chunk := range slices.Chunk(ids, evalBatch) {
				var won []uuid.UUID
				err := tx.NewUpdate().Model((*Alert)(nil)).
					Set("checked_version = ?, checked_through = ?, status = ?", k.version, k.through, status).
					Set("fired_count = fired_count + ?, last_fired_at = ?, updated_at = ?", k.fired, now, now).
					Where("id IN (?) AND status = ? AND checked_version = ?", bun.In(chunk), Active, k.from).
					Returning("id").Scan(ctx, &won)
				if err != nil {
					return fmt.Errorf("alerts: claim alerts: %w", err)
				}
				for _, id := range won {
					claimed = append(claimed, byID[id])
				}
			}
		}
		for _, k := range sortedKeys(quiet) {
			ids := quiet[k]
			for chunk := range slices.Chunk(ids, evalBatch) {
				q := tx.NewUpdate().Model((*Alert)(nil)).Set("checked_version = ?", k.version).
					Where("id IN (?) AND status = ? AND checked_version < ?", bun.In(chunk), Active, k.version)
				if k.through != "" {
					q = q.Set("checked_through = ?", k.through)
				}
				if _, err := q.Exec(ctx); err != nil {
					return fmt.Errorf("alerts: advance watermarks: %w", err)
				}
			}
		}
		if len(claimed) == 0 {
			return nil
		}
		hooks, err := alertWebhooks(ctx, tx, claimed)
		if err != nil {
			return err
		}
		var ns []Notification
		var fs []Firing
		var ds []Delivery
		for _, o := range claimed {
			for _, f := range o.at {
				n := alertNotification(o.c.Alert, f, now)
				ns = append(ns, n)
				fs = append(fs, Firing{AlertID: o.c.ID, BarDate: f.date, NotificationID: n.ID, FiredAt: now})
				ds = appendDeliveries(ds, n, hooks(o.c.Alert), now)
			}
			fired += len(o.at)
		}
		if err := insertAll(ctx, tx, ns, "notifications"); err != nil {
			return err
		}
		if err := insertAll(ctx, tx, fs, "firings"); err != nil {
			return err
		}
		return insertAll(ctx, tx, ds, "deliveries")
	})
	if err != nil {
		return 0, err
	}
	return fired, nil
}

// sortedKeys returns the groups of m in a fixed order.
func sortedKeys(m map[watermark][]uuid.UUID) []watermark {
	keys := make([]watermark, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b watermark) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.version, b.version), strings.Compare(a.through, b.through),
			cmp.Compare(a.fired, b.fired), cmp.Compare(fmt.Sprint(a.once), fmt.Sprint(b.once)))
	})
	return keys
}

// insertAll inserts rows, evalBatch a statement.
func insertAll[T any](ctx context.Context, db bun.IDB, rows []T, what string) error {
	for chunk := range slices.Chunk(rows, evalBatch) {
		if _, err := db.NewInsert().Model(&chunk).Exec(ctx); err != nil {
			return fmt.Errorf("alerts: insert %s: %w", what, err)
		}
	}
	return nil
}

// alertWebhooks reads the live webhooks of the claimed alerts' users
// and returns a function giving the ids an alert's notifications go to:
// its own webhook, or all its user's when it names none.
func alertWebhooks(ctx context.Context, db bun.IDB, claimed []*outcome) (func(Alert) []uuid.UUID, error) {
	users := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, o := range claimed {
		if !users[o.c.UserID] {
			users[o.c.UserID] = true
			ids = append(ids, o.c.UserID)
		}
	}
	var hooks []Webhook
	for chunk := range slices.Chunk(ids, evalBatch) {
		var part []Webhook
		err := db.NewSelect().Model(&part).Column("id", "user_id").
			Where("user_id IN (?) AND deleted_at IS NULL", bun.In(chunk)).OrderExpr("created_at, id").Scan(ctx)
		if err != nil {
			return nil, fmt.Errorf("alerts: webhooks of alerts: %w", err)
		}
		hooks = append(hooks, part...)
	}
	live, byUser := map[uuid.UUID]bool{}, map[uuid.UUID][]uuid.UUID{}
	for _, h := range hooks {
		live[h.ID] = true
		byUser[h.UserID] = append(byUser[h.UserID], h.ID)
	}
	return func(a Alert) []uuid.UUID {
		if a.WebhookID == nil {
			return byUser[a.UserID]
		}
		if live[*a.WebhookID] {
			return []uuid.UUID{*a.WebhookID}
		}
		return nil
	}, nil
}

// alertNotification returns the notification of a's firing on the bar f.
func alertNotification(a Alert, f firingAt, now time.Time) Notification {
	data, _ := json.Marshal(map[string]any{
		"alertId": a.ID.String(), "assetId": a.AssetID.String(), "symbol": a.Symbol,
		"date": f.date, "condition": a.Condition, "close": json.Number(strconv.FormatFloat(f.close, 'g', -1, 64)),
	})
	msg := fmt.Sprintf("Alert %q: %s held for %s on %s (close %s)", a.Name, a.Condition, a.Symbol, f.date,
		strconv.FormatFloat(f.close, 'f', -1, 64))
	return Notification{ID: uuid.New(), UserID: a.UserID, Kind: KindAlert, Message: msg, Data: string(data), CreatedAt: now}
}

// listen wakes the evaluation on every price change announced on
// PostgreSQL, reconnecting after failures, until ctx is done. The
// periodic pass of Run covers the gaps.
func (s *Service) listen(ctx context.Context) {
	for ctx.Err() == nil {
		ln := pgdriver.NewListener(s.db)
		stop := context.AfterFunc(ctx, func() { ln.Close() }) // Receive heeds no cancellation
		err := ln.Listen(ctx, marketdata.PricesChannel)
		if err == nil {
			s.Wake() // changes may have come while no one listened
			for {
				var payload string
				if _, payload, err = ln.Receive(ctx); err != nil {
					break
				}
				if payload != "ping" {
					s.Wake()
				}
			}
		}
		stop()
		ln.Close()
		if ctx.Err() != nil {
			return
		}
		s.log.Warn("alerts: price change notifications lost; polling until they are back", "err", err)
		select {
		case <-ctx.Done():
		case <-time.After(s.cfg.EvaluateEvery):
		}
	}
}
