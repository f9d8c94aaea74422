package alerts

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/ohlcv"
)

// MaxNewBars bounds the new bars one evaluation of an alert looks at: of
// a larger batch (a backfill of years), only the latest MaxNewBars are
// evaluated and the older ones are passed over, so that a history
// imported at once cannot fire an alert hundreds of times.
const MaxNewBars = 5

// changedAsset is an asset with active alerts whose prices changed since
// they were last evaluated, and the watermark of its alerts (see
// [Service.claim]).
type changedAsset struct {
	ID      uuid.UUID `bun:"id"`
	Symbol  string    `bun:"symbol"`
	Version int64     `bun:"prices_version"`
	// Checked and Through are the asset's watermark: the version and bar
	// date its alerts were last evaluated at; HasWatermark is false when
	// they never were (no row).
	HasWatermark bool   `bun:"has_watermark"`
	Checked      int64  `bun:"checked"`
	Through      string `bun:"through"`
}

// firingAt is a bar on which an alert's condition holds.
type firingAt struct {
	date  string
	close float64
}

const (
	// evalBatch bounds the rows of one statement of a pass.
	evalBatch = 1000
	// evalAssets is how many assets' alerts and bars a pass reads at once.
	evalAssets = 100
	// recordAssets is how many assets' outcomes one transaction of a pass
	// records (at least): commits, not rows, are what a transaction
	// costs most on SQLite.
	recordAssets = 1000
)

// assetOutcome is what evaluating the alerts of a changed asset gave:
// the watermark to move the asset to, and the alerts that fire.
type assetOutcome struct {
	asset   *changedAsset
	version int64
	through string // "" when the asset has no bars
	fire    []alertFiring
}

// alertFiring is an alert of an asset and the bars it fires on.
type alertFiring struct {
	alert Alert
	at    []firingAt
}

// evaluate runs one evaluation pass: the active alerts of every asset
// whose prices changed since its alerts' watermark are evaluated on the
// bars after it (and after the alert's own), fire on each bar where their
// condition holds (the first only, for a once alert), and the asset's
// watermark moves to its latest bar. It returns the number of firings.
// Passes of any number of Services may run at once: each firing happens
// once.
//
// The alerts and bars of evalAssets assets are read at once, a batch
// ahead of the evaluation (see [Service.readBatches], and
// marketdata.Store.PriceColumnsOf, which brings the stored copies of the
// columns up to date from the day's records), each distinct condition is
// parsed once per pass and evaluated once per asset, and the outcomes of
// recordAssets assets are recorded in one transaction (see
// [Service.record]).
func (s *Service) evaluate(ctx context.Context) (int, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	var changed []changedAsset
	err := s.db.NewSelect().TableExpr("assets AS a").
		ColumnExpr("a.id, a.symbol, a.prices_version").
		ColumnExpr("w.asset_id IS NOT NULL AS has_watermark, COALESCE(w.version, 0) AS checked, COALESCE(w.through, '') AS through").
		Join("LEFT JOIN alert_watermarks AS w ON w.asset_id = a.id").
		Where("a.prices_version > COALESCE(w.version, -1)").
		Where("EXISTS (SELECT 1 FROM alerts AS al WHERE al.asset_id = a.id AND al.status = ? AND al.checked_version < a.prices_version)", Active).
		OrderExpr("a.id").Scan(ctx, &changed)
	if err != nil {
		return 0, fmt.Errorf("alerts: evaluate: %w", err)
	}
	exprs := map[string]*formula.Expr{} // parsed conditions; nil for one that does not parse
	fired := 0
	var outs []assetOutcome
	flush := func() error {
		n, err := s.record(ctx, outs)
		fired += n
		outs = outs[:0]
		return err
	}
	for r := range s.readBatches(ctx, changed) {
		if r.err != nil {
			return fired, r.err
		}
		for i := range r.assets {
			a := &r.assets[i]
			b, ok := r.bars[a.ID]
			if !ok || b.Version <= a.Checked && a.HasWatermark {
				continue // the asset is gone, or a newer pass moved it on
			}
			outs = append(outs, evaluateAsset(a, r.alerts[a.ID], b, exprs))
		}
		if len(outs) >= recordAssets {
			if err := flush(); err != nil {
				return fired, err
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

// batchRead is what evaluating a batch of changed assets needs: their
// active alerts and their bars, or the error reading them gave.
type batchRead struct {
	assets []changedAsset
	alerts map[uuid.UUID][]Alert
	bars   map[uuid.UUID]marketdata.VersionedColumns
	err    error
}

// readBatches yields the alerts and bars of the assets, evalAssets at a
// time, read one batch ahead of the caller: the database works on the
// next batch while the caller evaluates this one. A batch whose reading
// failed, with its error, is the last; the reading stops too when the
// caller's loop stops or ctx ends, and has ended when the loop has.
func (s *Service) readBatches(ctx context.Context, assets []changedAsset) iter.Seq[batchRead] {
	return func(yield func(batchRead) bool) {
		ctx, cancel := context.WithCancel(ctx)
		reads := make(chan batchRead, 1)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(reads)
			md := marketdata.NewStore(s.db)
			for batch := range slices.Chunk(assets, evalAssets) {
				r := batchRead{assets: batch}
				ids := make([]uuid.UUID, len(batch))
				for i := range batch {
					ids[i] = batch[i].ID
				}
				if r.alerts, r.err = s.activeAlerts(ctx, ids); r.err == nil {
					if r.bars, r.err = md.PriceColumnsOf(ctx, ids); r.err != nil {
						r.err = fmt.Errorf("alerts: bars: %w", r.err)
					}
				}
				select {
				case reads <- r:
				case <-ctx.Done():
					return
				}
				if r.err != nil {
					return
				}
			}
		}()
		defer wg.Wait()
		defer cancel()
		for r := range reads {
			if !yield(r) {
				return
			}
		}
	}
}

// activeAlerts returns the active alerts of the assets, by asset, with
// the columns evaluating and firing them need. It scans the rows itself:
// bun's reflection costs more than the query on the 10,000 alerts a
// day's import may wake.
func (s *Service) activeAlerts(ctx context.Context, assets []uuid.UUID) (map[uuid.UUID][]Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, asset_id, name, condition, webhook_id, once, checked_version, checked_through
		FROM alerts WHERE asset_id IN (?) AND status = ? ORDER BY asset_id, id`, bun.In(assets), Active)
	if err != nil {
		return nil, fmt.Errorf("alerts: active alerts: %w", err)
	}
	defer rows.Close()
	out := make(map[uuid.UUID][]Alert, len(assets))
	for rows.Next() {
		var a Alert
		var hook uuid.NullUUID
		err := rows.Scan(&a.ID, &a.UserID, &a.AssetID, &a.Name, &a.Condition, &hook, &a.Once, &a.CheckedVersion, &a.CheckedThrough)
		if err != nil {
			return nil, fmt.Errorf("alerts: active alerts: %w", err)
		}
		if hook.Valid {
			a.WebhookID = &hook.UUID
		}
		a.Status = Active
		out[a.AssetID] = append(out[a.AssetID], a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("alerts: active alerts: %w", err)
	}
	return out, nil
}

// evaluateAsset evaluates the alerts of the changed asset a on its bars.
// An alert is evaluated on the bars after the later of its own watermark
// and the asset's; one whose own is as new as the bars (made after they
// were read) is passed over.
func evaluateAsset(a *changedAsset, alerts []Alert, b marketdata.VersionedColumns, exprs map[string]*formula.Expr) assetOutcome {
	bars := b.Bars
	o := assetOutcome{asset: a, version: b.Version}
	if n := len(bars.Dates); n > 0 {
		o.through = bars.Dates[n-1].String()
	}
	if o.through == "" {
		return o
	}
	values := map[string][]float64{} // by condition: alerts that share one evaluate it once
	for _, al := range alerts {
		if al.CheckedVersion >= b.Version {
			continue
		}
		vals, ok := values[al.Condition]
		if !ok {
			vals = evalCondition(exprs, al.Condition, bars)
			values[al.Condition] = vals
		}
		if at := firings(bars, vals, max(al.CheckedThrough, a.Through), al.Once); len(at) > 0 {
			al.Symbol = a.Symbol
			o.fire = append(o.fire, alertFiring{alert: al, at: at})
		}
	}
	return o
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

// record writes the outcomes of assets in one transaction and
// returns the number of firings it recorded. The assets are claimed first
// (see [Service.claim]); only the alerts of claimed assets fire, and of
// them only those still active, which the same statement marks as fired
// (status triggered for a once alert) and returns. Their notifications
// (kind "alert"), firing rows (whose primary key refuses a second firing
// for a bar) and webhook deliveries are inserted in bulk. Alerts that do
// not fire are not written: the asset's watermark covers them.
func (s *Service) record(ctx context.Context, outs []assetOutcome) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	now := s.clock()
	fired := 0
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		fired = 0
		won, err := claim(ctx, tx, outs)
		if err != nil {
			return err
		}
		// The firing alerts of the claimed assets, by how they move.
		type move struct {
			version int64
			through string
			once    bool
			fired   int
		}
		moves := map[move][]uuid.UUID{}
		byID := map[uuid.UUID]*alertFiring{}
		for i := range outs {
			o := &outs[i]
			if !won[o.asset.ID] {
				continue
			}
			for j := range o.fire {
				f := &o.fire[j]
				k := move{version: o.version, through: o.through, once: f.alert.Once, fired: len(f.at)}
				moves[k] = append(moves[k], f.alert.ID)
				byID[f.alert.ID] = f
			}
		}
		keys := slices.SortedFunc(maps.Keys(moves), func(a, b move) int {
			return cmp.Or(cmp.Compare(a.version, b.version), strings.Compare(a.through, b.through),
				cmp.Compare(a.fired, b.fired), cmp.Compare(b2i(a.once), b2i(b.once)))
		})
		var firing []*alertFiring
		for _, k := range keys {
			status := Active
			if k.once {
				status = Triggered
			}
			for chunk := range slices.Chunk(moves[k], evalBatch) {
				var ids []uuid.UUID
				err := tx.NewUpdate().Model((*Alert)(nil)).
					Set("checked_version = ?, checked_through = ?, status = ?", k.version, k.through, status).
					Set("fired_count = fired_count + ?, last_fired_at = ?, updated_at = ?", k.fired, now, now).
					Where("id IN (?) AND status = ?", bun.In(chunk), Active).
					Returning("id").Scan(ctx, &ids)
				if err != nil {
					return fmt.Errorf("alerts: fire alerts: %w", err)
				}
				for _, id := range ids {
					firing = append(firing, byID[id])
				}
			}
		}
		if len(firing) == 0 {
			return nil
		}
		hooks, err := alertWebhooks(ctx, tx, firing)
		if err != nil {
			return err
		}
		var ns []Notification
		var fs []Firing
		var ds []Delivery
		for _, f := range firing {
			for _, at := range f.at {
				n := alertNotification(f.alert, at, now)
				ns = append(ns, n)
				fs = append(fs, Firing{AlertID: f.alert.ID, BarDate: at.date, NotificationID: n.ID, FiredAt: now})
				ds = appendDeliveries(ds, n, hooks(f.alert), now)
			}
			fired += len(f.at)
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

// b2i is 1 for true, 0 for false.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// claim moves the watermarks of the outcomes' assets from the values the
// pass read to the new ones, and returns the assets whose watermark it
// moved. A watermark that another pass moved meanwhile is left alone:
// that pass evaluated the asset, and its alerts fire from it only. An
// asset without one gets a row, unless a concurrent pass inserted it
// first (INSERT … ON CONFLICT DO NOTHING RETURNING). The statements take
// the assets in the order of their ids, so that concurrent passes lock
// alike rows in the same order.
func claim(ctx context.Context, tx bun.Tx, outs []assetOutcome) (map[uuid.UUID]bool, error) {
	type move struct {
		from, version int64
		through       string
	}
	moves := map[move][]uuid.UUID{}
	var fresh []assetOutcome
	for _, o := range outs {
		if !o.asset.HasWatermark {
			fresh = append(fresh, o)
			continue
		}
		k := move{from: o.asset.Checked, version: o.version, through: o.through}
		moves[k] = append(moves[k], o.asset.ID)
	}
	won := make(map[uuid.UUID]bool, len(outs))
	var q strings.Builder
	if len(fresh) > 0 {
		q.WriteString("INSERT INTO alert_watermarks (asset_id, version, through) VALUES ")
		args := make([]any, 0, 3*len(fresh))
		for i, o := range fresh {
			if i > 0 {
				q.WriteString(", ")
			}
			q.WriteString("(?, ?, ?)")
			args = append(args, o.asset.ID, o.version, o.through)
		}
		q.WriteString(" ON CONFLICT (asset_id) DO NOTHING RETURNING asset_id")
		var ids []uuid.UUID
		if err := tx.NewRaw(q.String(), args...).Scan(ctx, &ids); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("alerts: claim assets: %w", err)
		}
		for _, id := range ids {
			won[id] = true
		}
	}
	keys := slices.SortedFunc(maps.Keys(moves), func(a, b move) int {
		return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.version, b.version), strings.Compare(a.through, b.through))
	})
	for _, k := range keys {
		var ids []uuid.UUID
		err := tx.NewRaw("UPDATE alert_watermarks SET version = ?, through = ? WHERE asset_id IN (?) AND version = ? RETURNING asset_id",
			k.version, k.through, bun.In(moves[k]), k.from).Scan(ctx, &ids)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("alerts: claim assets: %w", err)
		}
		for _, id := range ids {
			won[id] = true
		}
	}
	return won, nil
}

// insertAll inserts rows, evalBatch a statement, without reading back
// the columns left to their defaults (bun's RETURNING of nil pointers).
func insertAll[T any](ctx context.Context, db bun.IDB, rows []T, what string) error {
	for chunk := range slices.Chunk(rows, evalBatch) {
		if _, err := db.NewInsert().Model(&chunk).Returning("NULL").Exec(ctx); err != nil {
			return fmt.Errorf("alerts: insert %s: %w", what, err)
		}
	}
	return nil
}

// alertWebhooks reads the live webhooks of the firing alerts' users and
// returns a function giving the ids an alert's notifications go to: its
// own webhook, or all its user's when it names none.
func alertWebhooks(ctx context.Context, db bun.IDB, firing []*alertFiring) (func(Alert) []uuid.UUID, error) {
	users := map[uuid.UUID]bool{}
	var ids []uuid.UUID
	for _, f := range firing {
		if !users[f.alert.UserID] {
			users[f.alert.UserID] = true
			ids = append(ids, f.alert.UserID)
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
// PostgreSQL, until ctx is done. The periodic pass of Run covers the
// gaps, and the whole of the work where notifications cannot reach this
// process (see [database.Listen]).
func (s *Service) listen(ctx context.Context) {
	database.Listen(ctx, s.db, marketdata.PricesChannel, s.cfg.EvaluateEvery, s.log.With("service", "alerts"), func(payload string) {
		if payload != "ping" {
			s.Wake() // "" too: changes may have come while no one listened
		}
	})
}
