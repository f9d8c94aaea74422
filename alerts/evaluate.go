package alerts

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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

// evaluate runs one evaluation pass: every active alert whose asset's
// prices changed since its watermark is evaluated on the bars after the
// watermark, fires on each bar where its condition holds (the first only,
// for a once alert), and has its watermark moved to the latest bar. It
// returns the number of firings. Passes of any number of Services may
// run at once: each firing happens once.
func (s *Service) evaluate(ctx context.Context) (int, error) {
	s.passMu.Lock()
	defer s.passMu.Unlock()
	var cands []candidate
	err := s.db.NewSelect().Model(&cands).ColumnExpr("alert.*, a.symbol, a.prices_version AS asset_version").
		Join("JOIN assets AS a ON a.id = alert.asset_id").
		Where("alert.status = ? AND a.prices_version > alert.checked_version", Active).
		OrderExpr("alert.asset_id").Scan(ctx)
	if err != nil {
		return 0, fmt.Errorf("alerts: evaluate: %w", err)
	}
	fired := 0
	for start := 0; start < len(cands); {
		end := start
		for end < len(cands) && cands[end].AssetID == cands[start].AssetID {
			end++
		}
		n, err := s.evaluateAsset(ctx, cands[start:end])
		fired += n
		if err != nil {
			return fired, err
		}
		start = end
	}
	if fired > 0 {
		s.wakeDeliveries()
	}
	return fired, nil
}

// evaluateAsset evaluates the candidate alerts of one asset.
func (s *Service) evaluateAsset(ctx context.Context, cands []candidate) (int, error) {
	assetID := cands[0].AssetID
	bars, v, err := s.studies.Bars(ctx, assetID, false) // conditions watch the prices as traded
	if err != nil {
		return 0, fmt.Errorf("alerts: bars of %s: %w", assetID, err)
	}
	if bars.Len() == 0 {
		return 0, s.advance(ctx, cands, v.Version, "")
	}
	last := bars.Dates[len(bars.Dates)-1].String()
	values := map[string][]float64{} // by condition: alerts that share one evaluate it once
	var quiet []candidate
	fired := 0
	for _, c := range cands {
		if v.Version <= c.CheckedVersion {
			continue // read before a newer pass moved it on
		}
		vals, ok := values[c.Condition]
		if !ok {
			vals = evalCondition(c.Condition, bars)
			values[c.Condition] = vals
		}
		at := firings(bars, vals, c.CheckedThrough, c.Once)
		if len(at) == 0 {
			quiet = append(quiet, c)
			continue
		}
		ok, err := s.fire(ctx, c, v.Version, last, at)
		if err != nil {
			return fired, err
		}
		if ok {
			fired += len(at)
		}
	}
	return fired, s.advance(ctx, quiet, v.Version, last)
}

// evalCondition evaluates cond over bars; nil when it does not parse or
// evaluate (a condition stored before the language changed), which never
// fires.
func evalCondition(cond string, bars ohlcv.Series) []float64 {
	e, err := formula.Parse(cond)
	if err != nil {
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

// advance moves the watermark of alerts that did not fire to version and
// the bar date through, never backwards.
func (s *Service) advance(ctx context.Context, cands []candidate, version int64, through string) error {
	if len(cands) == 0 {
		return nil
	}
	ids := make([]uuid.UUID, len(cands))
	for i, c := range cands {
		ids[i] = c.ID
	}
	q := s.db.NewUpdate().Model((*Alert)(nil)).Set("checked_version = ?", version).
		Where("id IN (?) AND status = ? AND checked_version < ?", bun.In(ids), Active, version)
	if through != "" {
		q = q.Set("checked_through = ?", through)
	}
	if _, err := q.Exec(ctx); err != nil {
		return fmt.Errorf("alerts: advance watermarks: %w", err)
	}
	return nil
}

// fire records the firings of c in one transaction: the watermark moves
// from c's to (version, through) only if no one else moved it meanwhile,
// and with it a notification, a firing row per bar and a delivery per
// webhook are written. It reports whether this call fired (false: another
// pass did).
func (s *Service) fire(ctx context.Context, c candidate, version int64, through string, at []firingAt) (bool, error) {
	now := s.clock()
	status := Active
	if c.Once {
		status = Triggered
	}
	fired := false
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*Alert)(nil)).
			Set("checked_version = ?, checked_through = ?, status = ?", version, through, status).
			Set("fired_count = fired_count + ?, last_fired_at = ?, updated_at = ?", len(at), now, now).
			Where("id = ? AND status = ? AND checked_version = ?", c.ID, Active, c.CheckedVersion).Exec(ctx)
		if err != nil {
			return fmt.Errorf("alerts: claim alert %s: %w", c.ID, err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // another pass moved the watermark first
		}
		hooks, err := s.alertWebhooks(ctx, tx, c.Alert)
		if err != nil {
			return err
		}
		for _, f := range at {
			n := alertNotification(c.Alert, f, now)
			if _, err := tx.NewInsert().Model(&n).Exec(ctx); err != nil {
				return fmt.Errorf("alerts: insert notification: %w", err)
			}
			fr := Firing{AlertID: c.ID, BarDate: f.date, NotificationID: n.ID, FiredAt: now}
			if _, err := tx.NewInsert().Model(&fr).Exec(ctx); err != nil {
				return fmt.Errorf("alerts: insert firing of %s on %s: %w", c.ID, f.date, err)
			}
			if err := insertDeliveries(ctx, tx, n, hooks, now); err != nil {
				return err
			}
		}
		fired = true
		return nil
	})
	return fired, err
}

// alertWebhooks returns the ids of the live webhooks an alert's
// notifications go to: its own, or all its user's when it names none.
func (s *Service) alertWebhooks(ctx context.Context, db bun.IDB, a Alert) ([]uuid.UUID, error) {
	var ids []uuid.UUID
	q := db.NewSelect().Model((*Webhook)(nil)).Column("id").Where("deleted_at IS NULL")
	if a.WebhookID != nil {
		q = q.Where("id = ?", *a.WebhookID)
	} else {
		q = q.Where("user_id = ?", a.UserID)
	}
	if err := q.Scan(ctx, &ids); err != nil {
		return nil, fmt.Errorf("alerts: webhooks of alert %s: %w", a.ID, err)
	}
	return ids, nil
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
