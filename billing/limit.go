package billing

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Limits are the request allowances of a plan.
type Limits struct {
	PerMinute int
	PerDay    int
}

// Usage reports a rate-limit decision for the tighter of the two windows:
// the one with fewer requests left, or the one that refused the request.
type Usage struct {
	// Allowed reports whether the request may proceed.
	Allowed bool
	// Window is "minute" or "day".
	Window string
	// Limit is the window's allowance and Remaining what is left of it.
	Limit, Remaining int
	// Reset is when the window ends.
	Reset time.Time
	// RetryAfter is, for a refused request, how long until it could
	// succeed.
	RetryAfter time.Duration
}

type window struct {
	kind  string // "m" or "d", as stored
	name  string
	start time.Time
	end   time.Time
	limit int
}

func windows(now time.Time, lim Limits) [2]window {
	now = now.UTC()
	m := now.Truncate(time.Minute)
	d := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	return [2]window{
		{kind: "m", name: "minute", start: m, end: m.Add(time.Minute), limit: lim.PerMinute},
		{kind: "d", name: "day", start: d, end: d.AddDate(0, 0, 1), limit: lim.PerDay},
	}
}

// Consume counts one request of the account at time now against lim,
// unless that would exceed either window, in which case the request is
// refused and not counted. The members of an account share its counts
// (pass [User.AccountID] or [Principal.AccountID], never a member's own
// id). It is atomic across processes sharing the database.
func (s *Store) Consume(ctx context.Context, accountID uuid.UUID, lim Limits, now time.Time) (Usage, error) {
	_, use, err := s.take(ctx, accountID, lim, now, 1)
	return use, err
}

// take counts up to n requests of the account at time now in both windows
// and returns how many it counted: n when both windows have room for
// them, fewer (maybe none) when one has not. Usage is the state after the
// take; it is Allowed when at least one request was counted.
func (s *Store) take(ctx context.Context, accountID uuid.UUID, lim Limits, now time.Time, n int) (int, Usage, error) {
	ws := windows(now, lim)
	var rows []struct {
		Kind  string `bun:"window_kind"`
		Count int    `bun:"count"`
	}
	err := s.db.NewRaw(`INSERT INTO rate_counters (account_id, window_kind, window_start, count)
		VALUES (?, ?, ?, ?), (?, ?, ?, ?)
		ON CONFLICT (account_id, window_kind, window_start)
		DO UPDATE SET count = rate_counters.count + excluded.count
		RETURNING window_kind, count`,
		accountID, ws[0].kind, ws[0].start.Unix(), n, accountID, ws[1].kind, ws[1].start.Unix(), n,
	).Scan(ctx, &rows)
	if err != nil {
		return 0, Usage{}, fmt.Errorf("billing: count request: %w", err)
	}
	var counts [2]int
	for _, r := range rows {
		if r.Kind == ws[0].kind {
			counts[0] = r.Count
		} else {
			counts[1] = r.Count
		}
	}

	granted := n
	for i, w := range ws {
		granted = min(granted, n-(counts[i]-w.limit))
	}
	granted = max(granted, 0)
	if back := n - granted; back > 0 {
		if err := s.giveBack(ctx, accountID, ws, back); err != nil {
			return 0, Usage{}, err
		}
		counts[0] -= back
		counts[1] -= back
	}

	if granted == 0 {
		over := 0 // the window that refuses, the day's first
		if counts[1] >= ws[1].limit {
			over = 1
		}
		w := ws[over]
		return 0, Usage{Window: w.name, Limit: w.limit, Remaining: 0, Reset: w.end, RetryAfter: w.end.Sub(now)}, nil
	}
	t := 0
	if ws[1].limit-counts[1] < ws[0].limit-counts[0] {
		t = 1
	}
	return granted, Usage{Allowed: true, Window: ws[t].name, Limit: ws[t].limit, Remaining: ws[t].limit - counts[t], Reset: ws[t].end}, nil
}

// giveBack uncounts n requests in both windows, one row per statement so
// that the row locks are always taken in the same order as the upsert's.
func (s *Store) giveBack(ctx context.Context, accountID uuid.UUID, ws [2]window, n int) error {
	for _, w := range ws {
		_, err := s.db.NewRaw(`UPDATE rate_counters SET count = count - ?
			WHERE account_id = ? AND window_kind = ? AND window_start = ?`,
			n, accountID, w.kind, w.start.Unix()).Exec(ctx)
		if err != nil {
			return fmt.Errorf("billing: uncount requests: %w", err)
		}
	}
	return nil
}

// PruneCounters deletes the counters of windows that started before t.
func (s *Store) PruneCounters(ctx context.Context, before time.Time) error {
	_, err := s.db.NewRaw(`DELETE FROM rate_counters WHERE window_start < ?`, before.Unix()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("billing: prune counters: %w", err)
	}
	return nil
}
