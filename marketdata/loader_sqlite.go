package marketdata

import (
	"context"
	"database/sql/driver"
	"fmt"
	"strings"
	"unsafe"

	"github.com/google/uuid"
)

// LoadRows are price rows in the SQLite load format of a [Loader], for
// [Loader.InsertPrices]: the text of each row's date, open, high, low and
// close back to back in Data, each field ending at its offset in Ends
// (five a row), and the volumes in Volumes. The rows come in runs of one
// asset each.
type LoadRows struct {
	Data    []byte
	Ends    []uint32
	Volumes []int64
	// IDs are the assets of the rows, and Fresh tells, for each, whether
	// its rows may be INSERTed without a conflict clause: the asset had
	// no prices before and no row repeats one of its dates.
	IDs   []uuid.UUID
	Fresh []bool
	// Runs are the runs of rows: Runs[i].End is the row after run i, whose
	// rows are of the asset IDs[Runs[i].Asset].
	Runs []LoadRun
}

// LoadRun is a run of consecutive [LoadRows] of one asset.
type LoadRun struct {
	// Asset is the index of the asset in LoadRows.IDs.
	Asset int32
	// End is the index of the row after the run's last.
	End int
}

// sqliteStmt is a statement that writes price rows, prepared once on the
// driver connection under the loader's connection and used only inside
// [bun.Conn.Raw]: each row then costs binding its values and a step of
// the compiled statement, where statements of literal rows cost SQLite a
// parse and a compilation per row.
type sqliteStmt struct {
	stmt driver.Stmt
	exec driver.StmtExecContext
}

// sqliteStmtRows is the number of rows a multi-row sqliteStmt writes:
// more rows per statement save per-statement work, but the driver finds
// each parameter's value by a linear search of them all.
const sqliteStmtRows = 8

// sqliteStmtSQL returns the statement that writes rows price rows: a plain
// INSERT, or with upsert the INSERT … ON CONFLICT of every price write.
func sqliteStmtSQL(rows int, upsert bool) string {
	const row = "(?, ?, ?, ?, ?, ?, ?)"
	q := "INSERT INTO prices (" + priceColumns + ") VALUES " + strings.Repeat(row+", ", rows-1) + row
	if upsert {
		q += priceUpsert
	}
	return q
}

// InsertPrices writes rows on SQLite and reports, for each asset of
// rows.IDs, whether its stored prices changed. The rows of fresh assets
// are INSERTed; the others are upserted. A statement never mixes two
// assets, so that its count of changed rows tells whether its asset
// changed.
//
// Statements write sqliteStmtRows rows, but one inside a savepoint (see
// [Loader.Savepoint]): SQLite journals the pages a multi-row statement
// changes so that it can undo the statement alone, and while a savepoint
// is open that journal is the sub-journal file, which grows by a page or
// so per statement for the whole file; a one-row INSERT needs no such
// journal.
//
// refused is the database refusing rows of a fresh asset, which the
// caller's checks should make impossible: the file fails, not the run.
// err is any other failure, after which the transaction must be rolled
// back.
func (l *Loader) InsertPrices(ctx context.Context, rows *LoadRows) (hit []bool, refused, err error) {
	ids := make([]any, len(rows.IDs)) // boxed once, not once per row
	for i, id := range rows.IDs {
		ids[i] = id.String()
	}
	hit = make([]bool, len(rows.IDs))
	// The statements run without ctx's Done channel, which the driver
	// would watch with a goroutine per statement; ctx is checked between
	// runs instead.
	stmtCtx := context.WithoutCancel(ctx)
	var stmtErr error
	err = l.conn.Raw(func(dc any) error {
		if len(l.args) == 0 {
			l.args = make([]driver.NamedValue, 7*sqliteStmtRows)
			for i := range l.args {
				l.args[i].Ordinal = i + 1
			}
		}
		data, start := rows.Data, uint32(0)
		r := 0
		for _, run := range rows.Runs {
			if err := ctx.Err(); err != nil {
				return err
			}
			sym, end := run.Asset, run.End
			fresh := rows.Fresh[sym]
			for r < end {
				n := sqliteStmtRows
				if end-r < n || l.savepoint {
					n = 1
				}
				st, err := l.sqliteStmt(ctx, dc, n, !fresh)
				if err != nil {
					return err
				}
				args := l.args[:7*n]
				for i := range n {
					row := args[7*i : 7*i+7]
					row[0].Value = ids[sym]
					for j, e := range rows.Ends[(r+i)*5 : (r+i)*5+5] {
						row[j+1].Value = unsafe.String(&data[start], e-start)
						start = e
					}
					row[6].Value = rows.Volumes[r+i]
				}
				res, err := st.exec.ExecContext(stmtCtx, args)
				if err != nil {
					if fresh {
						// Nothing should conflict; if something does,
						// the file fails, not the run.
						stmtErr = err
					}
					return err
				}
				if k, err := res.RowsAffected(); err != nil || k > 0 {
					hit[sym] = true
				}
				r += n
			}
		}
		return nil
	})
	if stmtErr != nil {
		return nil, fmt.Errorf("insert: %w", stmtErr), nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("marketdata: bulk import: %w", err)
	}
	return hit, nil, nil
}

// sqliteStmt returns the statement that writes rows rows (1 or
// sqliteStmtRows), with upsert or not, preparing it on the driver
// connection dc the first time.
func (l *Loader) sqliteStmt(ctx context.Context, dc any, rows int, upsert bool) (*sqliteStmt, error) {
	i := 0
	if rows > 1 {
		i = 2
	}
	if upsert {
		i++
	}
	if l.stmts[i] != nil {
		return l.stmts[i], nil
	}
	pc, ok := dc.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("the SQLite driver (%T) cannot prepare statements", dc)
	}
	st, err := pc.PrepareContext(ctx, sqliteStmtSQL(rows, upsert))
	if err != nil {
		return nil, err
	}
	exec, ok := st.(driver.StmtExecContext)
	if !ok {
		st.Close()
		return nil, fmt.Errorf("the SQLite driver's statement (%T) cannot run with a context", st)
	}
	l.stmts[i] = &sqliteStmt{stmt: st, exec: exec}
	return l.stmts[i], nil
}

// closeStmts closes the prepared SQLite statements.
func (l *Loader) closeStmts() {
	l.conn.Raw(func(any) error {
		for i, st := range l.stmts {
			if st != nil {
				st.stmt.Close()
				l.stmts[i] = nil
			}
		}
		return nil
	})
}
