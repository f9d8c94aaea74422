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
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/internal/jsonnum"
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

	// seen is set in the first turn that evaluates the asset: seenVersion
	// and seenThrough are the version and latest bar that turn read, where
	// the watermark moves once every alert of the asset is evaluated.
	seen        bool
	seenVersion int64
	seenThrough string
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
	// recordEvery is how long a pass evaluates before it records the
	// outcomes so far, so that firings wait for no more than this, and the
	// end of a turn.
	recordEvery = 250 * time.Millisecond
)

// assetOutcome is what evaluating the alerts of a changed asset in a turn
// gave: the alerts that fire, and, once every alert of the asset is
// evaluated (complete), the watermark to move the asset to.
type assetOutcome struct {
	asset    *changedAsset
	version  int64
	through  string // "" when the asset has no bars
	fire     []alertFiring
	complete bool
}

// alertFiring is an alert of an asset and the bars it fires on, with the
// price version and latest bar of the bars it was evaluated on: its own
// watermark moves there.
type alertFiring struct {
	alert   Alert
	at      []firingAt
	version int64
	through string
}

// parsedCondition is a condition parsed once per pass: nil when it does
// not parse (a condition stored before the language changed), which
// never fires; cost is its formula.Expr.Cost.
type parsedCondition struct {
	e    *formula.Expr
	cost int64
}

// pass is the state of one evaluation pass.
type pass struct {
	s        *Service
	exprs    map[string]parsedCondition
	accounts map[uuid.UUID]uuid.UUID // account of each user met
	outs     []assetOutcome          // evaluated, not yet recorded
	recorded time.Time               // when outs were last recorded
	fired    int
}

// evaluate runs one evaluation pass: the active alerts of every asset
// whose prices changed since its alerts' watermark are evaluated on the
// bars after it (and after the alert's own), fire on each bar where their
// condition holds (the first only, for a once alert), and the asset's
// watermark moves to its latest bar. It returns the number of firings.
// Passes of any number of Services may run at once: each firing happens
// once.
//
// The pass runs in turns, so that one account's heavy conditions delay
// only itself. In a turn, each account may spend Config.SliceWork of
// work (formula cost × bars of each condition it evaluates); an alert met
// once its account has spent that waits for the next turn, which
// evaluates only such alerts. Every account's first turn so comes before
// any account's second. The outcomes are recorded at the end of each turn
// and every recordEvery within one: an alert fires as soon as it is
// evaluated, and an asset's watermark moves once all its alerts are.
//
// In a turn the alerts and bars of evalAssets assets are read at once, a
// batch ahead of the evaluation (see [Service.readBatches], and
// marketdata.Store.PriceColumnsOf, which brings the stored copies of the
// columns up to date from the day's records), each distinct condition is
// parsed once per pass and evaluated once per asset and turn, and the
// outcomes of up to recordAssets assets are recorded in one transaction
// (see [Service.record]).
func (s *Service) evaluate(ctx context.Context) (int, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	// Conditions are users' text: the tails of one pass's, no more, are
	// kept (see tailOf).
	defer s.tails.Clear()
	changed, err := s.changedAssets(ctx)
	if err != nil {
		return 0, err
	}
	p := &pass{s: s, exprs: map[string]parsedCondition{}, accounts: map[uuid.UUID]uuid.UUID{}, recorded: time.Now()}
	assets := changed
	var only map[uuid.UUID]bool // the alerts a turn evaluates; nil: every active one
	for len(assets) > 0 {
		assets, only, err = p.turn(ctx, assets, only)
		if err != nil {
			return p.fired, err
		}
	}
	if p.fired > 0 {
		s.wakeDeliveries()
	}
	return p.fired, nil
}

// changedAssets returns, by id, the assets with an active alert whose
// prices changed since both the asset's watermark and that alert's own
// (its CheckedVersion). The alerts' side (the assets with active alerts,
// the least CheckedVersion of those and the watermark) is one read by the
// partial index alerts_active_idx; their symbols and price versions are
// one read of marketdata.Store.AssetsOf.
func (s *Service) changedAssets(ctx context.Context) ([]changedAsset, error) {
	var rows []struct {
		changedAsset
		MinChecked int64 `bun:"min_checked"`
	}
	err := s.db.NewSelect().TableExpr("alerts AS al").
		ColumnExpr("al.asset_id AS id, MIN(al.checked_version) AS min_checked").
		ColumnExpr("w.asset_id IS NOT NULL AS has_watermark, COALESCE(w.version, 0) AS checked, COALESCE(w.through, '') AS through").
		Join("LEFT JOIN alert_watermarks AS w ON w.asset_id = al.asset_id").
		Where("al.status = ?", Active).
		GroupExpr("al.asset_id, w.asset_id, w.version, w.through").
		OrderExpr("al.asset_id").Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("alerts: evaluate: %w", err)
	}
	ids := make([]uuid.UUID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	assets, err := marketdata.NewStore(s.db).AssetsOf(ctx, ids)
	if err != nil {
		return nil, fmt.Errorf("alerts: evaluate: %w", err)
	}
	var changed []changedAsset
	for _, r := range rows {
		a, ok := assets[r.ID]
		watermark := int64(-1)
		if r.HasWatermark {
			watermark = r.Checked
		}
		if !ok || a.PricesVersion <= watermark || a.PricesVersion <= r.MinChecked {
			continue
		}
		c := r.changedAsset
		c.Symbol, c.Version = a.Symbol, a.PricesVersion
		changed = append(changed, c)
	}
	return changed, nil
}

// turn evaluates the alerts of the assets (those in only, unless it is
// nil), each account until it has spent Config.SliceWork, records the
// outcomes, and returns the assets and alerts left for the next turn.
func (p *pass) turn(ctx context.Context, assets []changedAsset, only map[uuid.UUID]bool) ([]changedAsset, map[uuid.UUID]bool, error) {
	spent := map[uuid.UUID]int64{} // by account
	var next []changedAsset
	later := map[uuid.UUID]bool{}
	for r := range p.s.readBatches(ctx, assets) {
		if r.err != nil {
			return nil, nil, r.err
		}
		if err := p.learnAccounts(ctx, r.alerts); err != nil {
			return nil, nil, err
		}
		for i := range r.assets {
			a := &r.assets[i]
			b, ok := r.bars[a.ID]
			if !ok || b.Version <= a.Checked && a.HasWatermark {
				continue // the asset is gone, or a newer pass moved it on
			}
			list := r.alerts[a.ID]
			if only != nil {
				list = slices.DeleteFunc(list, func(al Alert) bool { return !only[al.ID] })
			}
			o, wait := p.evaluateAsset(a, list, b, r.adjusted[a.ID], spent)
			p.outs = append(p.outs, o)
			if len(wait) > 0 {
				next = append(next, *a)
				for _, al := range wait {
					later[al.ID] = true
				}
			}
		}
		if len(p.outs) >= recordAssets || time.Since(p.recorded) >= recordEvery {
			if err := p.record(ctx); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := p.record(ctx); err != nil {
		return nil, nil, err
	}
	return next, later, nil
}

// record records the pass's outcomes so far.
func (p *pass) record(ctx context.Context) error {
	n, err := p.s.record(ctx, p.outs)
	p.fired += n
	p.outs = p.outs[:0]
	p.recorded = time.Now()
	return err
}

// learnAccounts looks up the accounts of the alerts' users not met yet.
func (p *pass) learnAccounts(ctx context.Context, byAsset map[uuid.UUID][]Alert) error {
	var users []uuid.UUID
	for _, list := range byAsset {
		for _, al := range list {
			if _, ok := p.accounts[al.UserID]; !ok {
				p.accounts[al.UserID] = al.UserID
				users = append(users, al.UserID)
			}
		}
	}
	if len(users) == 0 {
		return nil
	}
	m, err := p.s.cfg.AccountOf(ctx, users)
	if err != nil {
		return fmt.Errorf("alerts: accounts of users: %w", err)
	}
	for u, a := range m {
		p.accounts[u] = a
	}
	return nil
}

// batchRead is what evaluating a batch of changed assets needs: their
// active alerts and their bars, as traded and, for the assets with an
// alert on adjusted prices, back-adjusted; or the error reading them gave.
type batchRead struct {
	assets   []changedAsset
	alerts   map[uuid.UUID][]Alert
	bars     map[uuid.UUID]marketdata.VersionedColumns
	adjusted map[uuid.UUID]marketdata.VersionedColumns
	err      error
}

// readAdjusted returns the adjusted columns of the assets in bars that
// have an alert on adjusted prices (marketdata.Store.AdjustedColumnsOf).
func readAdjusted(ctx context.Context, md *marketdata.Store, alerts map[uuid.UUID][]Alert, bars map[uuid.UUID]marketdata.VersionedColumns) (map[uuid.UUID]marketdata.VersionedColumns, error) {
	want := map[uuid.UUID]marketdata.VersionedColumns{}
	for id, list := range alerts {
		b, ok := bars[id]
		if ok && slices.ContainsFunc(list, func(a Alert) bool { return a.Adjusted }) {
			want[id] = b
		}
	}
	out, err := md.AdjustedColumnsOf(ctx, want)
	if err != nil {
		return nil, fmt.Errorf("alerts: adjusted bars: %w", err)
	}
	return out, nil
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
					if r.bars, r.err = s.readBars(ctx, md, ids, r.alerts); r.err == nil {
						r.adjusted, r.err = readAdjusted(ctx, md, r.alerts, r.bars)
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

// readBars returns the bars of the assets that their alerts need: the
// latest bars only, as many as the formula that looks back furthest
// needs for the last MaxNewBars bars (see [Service.tailOf]), when every
// alert of the asset has such a bound; the whole history otherwise.
// After a day's import that reads a few dozen bars of most assets
// instead of their ten years.
func (s *Service) readBars(ctx context.Context, md *marketdata.Store, ids []uuid.UUID, alerts map[uuid.UUID][]Alert) (map[uuid.UUID]marketdata.VersionedColumns, error) {
	var whole, tail []uuid.UUID
	bars := 0
	for _, id := range ids {
		need := 1 // the latest bar, which the watermark moves to
		for _, al := range alerts[id] {
			t := s.tailOf(al.Condition)
			if t < 0 {
				need = -1
				break
			}
			need = max(need, t)
		}
		if need < 0 {
			whole = append(whole, id)
			continue
		}
		tail = append(tail, id)
		bars = max(bars, need)
	}
	out, err := md.PriceColumnsOf(ctx, whole)
	if err != nil {
		return nil, fmt.Errorf("alerts: bars: %w", err)
	}
	if len(tail) == 0 {
		return out, nil
	}
	tails, err := md.PriceTailsOf(ctx, tail, bars)
	if err != nil {
		return nil, fmt.Errorf("alerts: bars: %w", err)
	}
	maps.Copy(out, tails)
	return out, nil
}

// tailOf returns how many of an asset's latest bars evaluating the
// condition needs, for its values on the last MaxNewBars bars (the
// only ones that can fire; see [firings]): its formula's lookback
// (formula.Expr.Lookback) plus MaxNewBars; -1 when it needs the whole
// history (a formula with a recurrence, such as ema or rsi), or does not
// parse (and never fires).
func (s *Service) tailOf(cond string) int {
	if n, ok := s.tails.Load(cond); ok {
		return n.(int)
	}
	n := -1
	if e, err := formula.Parse(cond); err == nil {
		if k, ok := e.Lookback(); ok {
			n = k + MaxNewBars
		}
	}
	s.tails.Store(cond, n)
	return n
}

// activeAlerts returns the active alerts of the assets, by asset, with
// the columns evaluating and firing them need. It scans the rows itself:
// bun's reflection costs more than the query on the 10,000 alerts a
// day's import may wake.
func (s *Service) activeAlerts(ctx context.Context, assets []uuid.UUID) (map[uuid.UUID][]Alert, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, user_id, asset_id, name, condition, webhook_id, once, adjusted, checked_version, checked_through
		FROM alerts WHERE asset_id IN (?) AND status = ? ORDER BY asset_id, id`, bun.In(assets), Active)
	if err != nil {
		return nil, fmt.Errorf("alerts: active alerts: %w", err)
	}
	defer rows.Close()
	out := make(map[uuid.UUID][]Alert, len(assets))
	for rows.Next() {
		var a Alert
		var hook uuid.NullUUID
		err := rows.Scan(&a.ID, &a.UserID, &a.AssetID, &a.Name, &a.Condition, &hook, &a.Once, &a.Adjusted, &a.CheckedVersion, &a.CheckedThrough)
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

// evaluateAsset evaluates the alerts of the changed asset a on its bars,
// as traded (b) or back-adjusted (adj, same version and dates) as each
// alert chooses, charging each condition's work (cost × bars) to the account of the
// alert that first needs it in spent; an alert whose account has spent
// Config.SliceWork already is returned to wait for the next turn. An
// alert is evaluated on the bars after the later of its own watermark
// and the asset's; one whose own is as new as the bars (made after they
// were read) is passed over.
func (p *pass) evaluateAsset(a *changedAsset, alerts []Alert, b, adj marketdata.VersionedColumns, spent map[uuid.UUID]int64) (assetOutcome, []Alert) {
	bars := b.Bars
	through := ""
	if n := len(bars.Dates); n > 0 {
		through = bars.Dates[n-1].String()
	}
	if !a.seen {
		a.seen, a.seenVersion, a.seenThrough = true, b.Version, through
	}
	o := assetOutcome{asset: a, version: a.seenVersion, through: a.seenThrough}
	if through == "" {
		o.complete = true
		return o, nil
	}
	var wait []Alert
	type basis struct {
		cond     string
		adjusted bool
	}
	values := map[basis][]float64{} // alerts that share a condition and prices evaluate it once
	for _, al := range alerts {
		if al.CheckedVersion >= b.Version {
			continue
		}
		bars := bars
		if al.Adjusted && adj.Bars.Len() > 0 {
			// Read after b: cut to b's bars, which through and the
			// watermark describe.
			bars = adj.Bars.Slice(0, min(adj.Bars.Len(), bars.Len()))
		}
		key := basis{al.Condition, al.Adjusted}
		vals, ok := values[key]
		if !ok {
			acct := p.accounts[al.UserID]
			if spent[acct] >= p.s.cfg.SliceWork {
				wait = append(wait, al)
				continue
			}
			var work int64
			vals, work = p.evalCondition(al.Condition, bars)
			spent[acct] += work
			values[key] = vals
		}
		if at := firings(bars, vals, max(al.CheckedThrough, a.Through), al.Once); len(at) > 0 {
			al.Symbol = a.Symbol
			o.fire = append(o.fire, alertFiring{alert: al, at: at, version: b.Version, through: through})
		}
	}
	o.complete = len(wait) == 0
	return o, wait
}

// evalCondition evaluates cond over bars, parsing it once per pass, and
// returns its values and its work, cost × bars; nil values when it does
// not parse or evaluate (a condition stored before the language changed),
// which never fires.
func (p *pass) evalCondition(cond string, bars ohlcv.Series) ([]float64, int64) {
	pc, ok := p.exprs[cond]
	if !ok {
		if e, err := formula.Parse(cond); err == nil {
			pc = parsedCondition{e: e, cost: int64(e.Cost())}
		}
		p.exprs[cond] = pc
	}
	if pc.e == nil {
		return nil, 0
	}
	work := pc.cost * int64(bars.Len())
	vals, err := pc.e.Eval(bars)
	if err != nil {
		return nil, work
	}
	return vals, work
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
// returns the number of firings it recorded. The assets whose every alert
// was evaluated are claimed first (see [Service.claim]); the others'
// watermarks must still be as the pass read them (see [unmoved]). Only
// the alerts of those assets fire, and of them only those still active
// with the watermark the pass read, which the same statement moves to the
// bars they were evaluated on, marks as fired (status triggered for a
// once alert) and returns. Their notifications (kind "alert"), firing
// rows (whose primary key refuses a second firing for a bar) and webhook
// deliveries are inserted in bulk. Alerts that do not fire are not
// written: the asset's watermark covers them.
func (s *Service) record(ctx context.Context, outs []assetOutcome) (int, error) {
	if len(outs) == 0 {
		return 0, nil
	}
	now := s.clock()
	fired := 0
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		fired = 0
		var complete, partial []assetOutcome
		for _, o := range outs {
			if o.complete {
				complete = append(complete, o)
			} else if len(o.fire) > 0 {
				partial = append(partial, o)
			}
		}
		won, err := claim(ctx, tx, complete)
		if err != nil {
			return err
		}
		if err := unmoved(ctx, tx, partial, won); err != nil {
			return err
		}
		// The firing alerts of the won assets, by how they move.
		type move struct {
			from, version int64
			through       string
			once          bool
			fired         int
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
				k := move{from: f.alert.CheckedVersion, version: f.version, through: f.through, once: f.alert.Once, fired: len(f.at)}
				moves[k] = append(moves[k], f.alert.ID)
				byID[f.alert.ID] = f
			}
		}
		keys := slices.SortedFunc(maps.Keys(moves), func(a, b move) int {
			return cmp.Or(cmp.Compare(a.from, b.from), cmp.Compare(a.version, b.version), strings.Compare(a.through, b.through),
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
					Where("id IN (?) AND status = ? AND checked_version = ?", bun.In(chunk), Active, k.from).
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

// unmoved adds to won the assets of outs whose watermark is still the
// one the pass read (no row, for an asset that had none): their alerts
// evaluated so far may fire before the asset's other alerts are, since
// no other pass has evaluated the asset on newer bars.
func unmoved(ctx context.Context, tx bun.Tx, outs []assetOutcome, won map[uuid.UUID]bool) error {
	for chunk := range slices.Chunk(outs, evalBatch) {
		ids := make([]uuid.UUID, len(chunk))
		for i, o := range chunk {
			ids[i] = o.asset.ID
		}
		var rows []struct {
			AssetID uuid.UUID `bun:"asset_id"`
			Version int64     `bun:"version"`
		}
		if err := tx.NewRaw("SELECT asset_id, version FROM alert_watermarks WHERE asset_id IN (?)", bun.In(ids)).Scan(ctx, &rows); err != nil &&
			!errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("alerts: watermarks: %w", err)
		}
		at := make(map[uuid.UUID]int64, len(rows))
		for _, r := range rows {
			at[r.AssetID] = r.Version
		}
		for _, o := range chunk {
			v, ok := at[o.asset.ID]
			if ok == o.asset.HasWatermark && (!ok || v == o.asset.Checked) {
				won[o.asset.ID] = true
			}
		}
	}
	return nil
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
			Where("user_id IN (?) AND deleted_at IS NULL AND disabled_at IS NULL", bun.In(chunk)).OrderExpr("created_at, id").Scan(ctx)
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
	data := marshal(map[string]any{
		"alertId": a.ID.String(), "assetId": a.AssetID.String(), "symbol": a.Symbol,
		"date": f.date, "condition": a.Condition, "close": json.Number(jsonnum.AppendFloat(nil, f.close)),
	})
	msg := fmt.Sprintf("Alert %q: %s held for %s on %s (close %s)", a.Name, a.Condition, a.Symbol, f.date,
		jsonnum.AppendFloat(nil, f.close))
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
