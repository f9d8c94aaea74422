package dbcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/internal/seal"
)

// Sealed is a sealed value found in a database, with the context it is
// sealed under: what it takes to check that a key opens it.
type Sealed struct {
	Column  seal.Column
	Value   string
	Context string
}

// FindSealed returns a sealed value of db from one of cols (see
// [seal.IsSealed]), and whether there is any. A table or column of cols
// that db lacks is an error.
func FindSealed(ctx context.Context, db bun.IDB, cols []seal.Column) (Sealed, bool, error) {
	for _, c := range cols {
		var s Sealed
		err := db.NewRaw("SELECT ?, CAST(? AS TEXT) FROM ? WHERE ? LIKE 'v1.%' LIMIT 1",
			bun.Ident(c.Column), bun.Ident(c.ContextColumn), bun.Ident(c.Table), bun.Ident(c.Column)).
			Scan(ctx, &s.Value, &s.Context)
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return Sealed{}, false, fmt.Errorf("dbcopy: look for sealed values in %s.%s: %w", c.Table, c.Column, err)
		}
		if !seal.IsSealed(s.Value) {
			continue
		}
		s.Column, s.Context = c, c.Prefix+s.Context
		return s, true, nil
	}
	return Sealed{}, false, nil
}

// Opens reports whether key opens s.
func (s Sealed) Opens(key []byte) bool {
	sealer, err := seal.New(key)
	if err != nil {
		return false
	}
	_, err = sealer.Open(s.Value, s.Context)
	return err == nil
}
