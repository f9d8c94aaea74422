package marketdata

import (
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Store reads and writes market data. It works on a database or inside a
// transaction: build it from either. The SQL is written once for both
// dialects (PostgreSQL and SQLite).
type Store struct {
	db  bun.IDB
	now func() time.Time
}

// NewStore returns a Store on db, a *bun.DB or a bun.Tx, whose clock is
// time.Now.
func NewStore(db bun.IDB) *Store {
	return &Store{db: db, now: time.Now}
}

// WithClock returns a copy of s whose clock is now: the clock of the times
// it writes (when an asset's prices last changed).
func (s *Store) WithClock(now func() time.Time) *Store {
	c := *s
	c.now = now
	return &c
}

// notFound turns sql.ErrNoRows into a [*tradekit.Error] of kind
// [tradekit.ErrNotFound] saying "<what> not found", and wraps any other err.
func notFound(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "%s not found", what))
	}
	return fmt.Errorf("marketdata: %s: %w", what, err)
}

// SQLDate stores a calendar.Date as YYYY-MM-DD (TEXT in SQLite, DATE in
// PostgreSQL) and scans it back from either form; the zero Date is NULL.
// Convert to use it: args = append(args, marketdata.SQLDate(d)), or
// rows.Scan((*marketdata.SQLDate)(&d)).
type SQLDate calendar.Date

// Value implements [driver.Valuer].
func (d SQLDate) Value() (driver.Value, error) {
	if (d == SQLDate{}) {
		return nil, nil
	}
	return calendar.Date(d).String(), nil
}

// Scan implements [sql.Scanner].
func (d *SQLDate) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
		*d = SQLDate{}
		return nil
	case time.Time:
		*d = SQLDate(calendar.NewDate(v.Year(), v.Month(), v.Day()))
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("marketdata: cannot scan %T into a date", src)
	}
	if len(s) > 10 {
		s = s[:10] // a timestamp's date part
	}
	cd, err := calendar.ParseDate(s)
	if err != nil {
		return err
	}
	*d = SQLDate(cd)
	return nil
}
