package feed

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
)

// The outcomes of a run.
const (
	OutcomeRunning = "running" // not finished (or its instance died)
	OutcomeOK      = "ok"      // every day stored
	OutcomePartial = "partial" // some days failed; the next run fetches them again
	OutcomeFailed  = "failed"  // no day stored
)

// The statuses of a day.
const (
	DayDone   = "done"
	DayFailed = "failed"
)

// RunRecord is a recorded run of a provider's feed.
type RunRecord struct {
	bun.BaseModel `bun:"table:feed_runs" json:"-"`

	ID         uuid.UUID          `bun:"id,pk" json:"id"`
	Provider   string             `bun:"provider" json:"provider"`
	Instance   string             `bun:"instance" json:"instance"`
	StartedAt  time.Time          `bun:"started_at" json:"startedAt"`
	FinishedAt *time.Time         `bun:"finished_at" json:"finishedAt"`
	Outcome    string             `bun:"outcome" json:"outcome"`
	From       marketdata.SQLDate `bun:"from_date" json:"-"`
	To         marketdata.SQLDate `bun:"to_date" json:"-"`
	Days       int                `bun:"days" json:"days"`
	FailedDays int                `bun:"failed_days" json:"failedDays"`
	Rows       int64              `bun:"rows_stored" json:"rows"`
	NewAssets  int                `bun:"new_assets" json:"newAssets"`
	Actions    int                `bun:"actions" json:"actions"`
	Changed    int                `bun:"changed" json:"changed"`
	Error      string             `bun:"error" json:"error"`
}

// DayRecord is the outcome of one trading day of a provider's feed.
type DayRecord struct {
	bun.BaseModel `bun:"table:feed_days"`

	Provider  string             `bun:"provider,pk"`
	Date      marketdata.SQLDate `bun:"date,pk"`
	Status    string             `bun:"status"`
	Rows      int64              `bun:"rows_stored"`
	Attempts  int                `bun:"attempts"`
	Error     string             `bun:"error"`
	RunID     uuid.UUID          `bun:"run_id"`
	UpdatedAt time.Time          `bun:"updated_at"`
}

// Store reads and writes the feeds' runs, days and leases.
type Store struct {
	db bun.IDB
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx.
func NewStore(db bun.IDB) *Store { return &Store{db: db} }

// startRun records a run that starts now.
func (s *Store) startRun(ctx context.Context, r *RunRecord) error {
	_, err := s.db.NewInsert().Model(r).Exec(ctx)
	if err != nil {
		return fmt.Errorf("feed: record the run: %w", err)
	}
	return nil
}

// finishRun records the end of r.
func (s *Store) finishRun(ctx context.Context, r *RunRecord) error {
	_, err := s.db.NewUpdate().Model(r).WherePK().
		Column("finished_at", "outcome", "days", "failed_days", "rows_stored", "new_assets", "actions", "changed", "error").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("feed: record the end of the run: %w", err)
	}
	return nil
}

// Runs returns the last limit runs of provider ("" for every provider),
// newest first.
func (s *Store) Runs(ctx context.Context, provider string, limit int) ([]RunRecord, error) {
	var rs []RunRecord
	q := s.db.NewSelect().Model(&rs).OrderExpr("started_at DESC, id").Limit(limit)
	if provider != "" {
		q = q.Where("provider = ?", provider)
	}
	if err := q.Scan(ctx); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("feed: runs: %w", err)
	}
	return rs, nil
}

// Days returns the recorded days of provider from from to to, both
// included, oldest first.
func (s *Store) Days(ctx context.Context, provider string, from, to calendar.Date) ([]DayRecord, error) {
	var ds []DayRecord
	err := s.db.NewSelect().Model(&ds).
		Where("provider = ? AND date >= ? AND date <= ?", provider, marketdata.SQLDate(from), marketdata.SQLDate(to)).
		OrderExpr("date").Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("feed: days: %w", err)
	}
	return ds, nil
}

// FailedDays returns the days of provider whose last attempt failed,
// oldest first.
func (s *Store) FailedDays(ctx context.Context, provider string) ([]DayRecord, error) {
	var ds []DayRecord
	err := s.db.NewSelect().Model(&ds).
		Where("provider = ? AND status = ?", provider, DayFailed).OrderExpr("date").Scan(ctx)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("feed: failed days: %w", err)
	}
	return ds, nil
}

// saveDay records the outcome of a day.
func (s *Store) saveDay(ctx context.Context, d DayRecord) error {
	_, err := s.db.NewRaw(`INSERT INTO feed_days (provider, date, status, rows_stored, attempts, error, run_id, updated_at)
		VALUES (?, ?, ?, ?, 1, ?, ?, ?)
		ON CONFLICT (provider, date) DO UPDATE SET status = excluded.status, rows_stored = excluded.rows_stored,
			attempts = feed_days.attempts + 1, error = excluded.error, run_id = excluded.run_id, updated_at = excluded.updated_at`,
		d.Provider, d.Date, d.Status, d.Rows, d.Error, d.RunID, d.UpdatedAt.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("feed: record day %s: %w", calendar.Date(d.Date), err)
	}
	return nil
}

// LastBarDate returns the date of the latest stored daily bar of any
// asset, and false when there is none.
func (s *Store) LastBarDate(ctx context.Context) (calendar.Date, bool, error) {
	d, ok, err := marketdata.NewStore(s.db).LastPriceDate(ctx)
	if err != nil {
		return calendar.Date{}, false, fmt.Errorf("feed: last bar date: %w", err)
	}
	return d, ok, nil
}

// Acquire takes or renews the lease name for holder until now+ttl, and
// reports whether holder has it: false while another holder's lease runs.
// A lease is a row, not a session lock, so it works through a transaction
// pooler and across instances; a dead holder's lease lapses at its
// expiry.
func (s *Store) Acquire(ctx context.Context, name, holder string, now time.Time, ttl time.Duration) (bool, error) {
	if ttl <= 0 {
		return false, fmt.Errorf("feed: lease %s: ttl %s must be positive: %w", name, ttl, tradekit.ErrInvalid)
	}
	var got []string
	err := s.db.NewRaw(`INSERT INTO feed_leases (name, holder, expires_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
		WHERE feed_leases.holder = excluded.holder OR feed_leases.expires_at <= ?
		RETURNING holder`, name, holder, now.UTC().Add(ttl), now.UTC()).Scan(ctx, &got)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return false, fmt.Errorf("feed: lease %s: %w", name, err)
	}
	return len(got) == 1 && got[0] == holder, nil
}

// Release gives up holder's lease name, if it holds it.
func (s *Store) Release(ctx context.Context, name, holder string) error {
	_, err := s.db.NewRaw("DELETE FROM feed_leases WHERE name = ? AND holder = ?", name, holder).Exec(ctx)
	if err != nil {
		return fmt.Errorf("feed: release lease %s: %w", name, err)
	}
	return nil
}

// SetNextRun records when the scheduler of provider plans its next run.
func (s *Store) SetNextRun(ctx context.Context, provider string, at, now time.Time) error {
	_, err := s.db.NewRaw(`INSERT INTO feed_schedules (provider, next_run_at, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (provider) DO UPDATE SET next_run_at = excluded.next_run_at, updated_at = excluded.updated_at`,
		provider, at.UTC(), now.UTC()).Exec(ctx)
	if err != nil {
		return fmt.Errorf("feed: record the next run: %w", err)
	}
	return nil
}

// NextRuns returns the next run planned for each provider a scheduler
// runs, by provider name.
func (s *Store) NextRuns(ctx context.Context) (map[string]time.Time, error) {
	var rows []struct {
		Provider  string    `bun:"provider"`
		NextRunAt time.Time `bun:"next_run_at"`
	}
	if err := s.db.NewRaw("SELECT provider, next_run_at FROM feed_schedules ORDER BY provider").Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("feed: next runs: %w", err)
	}
	out := make(map[string]time.Time, len(rows))
	for _, r := range rows {
		out[r.Provider] = r.NextRunAt.UTC()
	}
	return out, nil
}
