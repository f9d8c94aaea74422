package dbcopy

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"
)

// writer writes rows into the target's transaction in batches, as plain
// SQL holding the values as literals, which any driver under bun sends as
// it is. On SQLite a batch is a multi-row INSERT … VALUES formatted by
// bun's dialect; on PostgreSQL it is an INSERT … SELECT from unnest of
// one array literal per column, which PostgreSQL reads several times
// faster than as many VALUES rows.
//
// The statements go to a goroutine of their own ([sender]), which runs
// them on the target one after the other while the next is read from the
// source and formatted: the target's work and the source's overlap.
type writer struct {
	dialect schema.Dialect
	pg      bool
	opts    Options
	send    *sender

	table  *table
	prefix []byte   // INSERT INTO t (columns) VALUES, or … SELECT * FROM unnest(
	buf    []byte   // the statement (SQLite: under way)
	arrays [][]byte // PostgreSQL: the elements of each column's array
	size   int      // bytes under way
	n      int      // rows under way
}

// copyTable copies the rows of t from src and returns their checksum.
// A table that references itself is read whole and written parents
// first (see [parentsFirst]), so that each row's reference holds when it
// is inserted.
func (w *writer) copyTable(ctx context.Context, src bun.IDB, t *table) (*checksum, error) {
	w.start(t)
	sum := &checksum{}
	var held [][]any
	self := t.selfRefs()
	err := scanRows(ctx, src, t, func(vals []any) error {
		sum.add(t, vals)
		if len(self) > 0 {
			held = append(held, append([]any(nil), vals...))
			return nil
		}
		return w.add(ctx, vals)
	})
	if err != nil {
		return nil, fmt.Errorf("dbcopy: %s: %w", t.name, err)
	}
	if len(self) > 0 {
		sorted, err := parentsFirst(t, self, held)
		if err != nil {
			return nil, fmt.Errorf("dbcopy: %s: %w", t.name, err)
		}
		for _, vals := range sorted {
			if err := w.add(ctx, vals); err != nil {
				return nil, err
			}
		}
	}
	if err := w.flush(ctx); err != nil {
		return nil, err
	}
	return sum, nil
}

// start begins the statements of table t.
func (w *writer) start(t *table) {
	q := w.dialect.IdentQuote()
	b := append(w.prefix[:0], "INSERT INTO "...)
	b = dialect.AppendIdent(b, t.name, q)
	b = append(b, " ("...)
	for i, c := range t.cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = dialect.AppendIdent(b, c.name, q)
	}
	if w.pg {
		b = append(b, ") SELECT * FROM unnest("...)
		w.arrays = w.arrays[:0]
		for range t.cols {
			w.arrays = append(w.arrays, nil)
		}
	} else {
		b = append(b, ") VALUES "...)
	}
	w.prefix = b
	w.table = t
}

// add adds a row of canonical values to the statement under way, and
// sends it once it is BatchBytes long.
func (w *writer) add(ctx context.Context, vals []any) error {
	if w.pg {
		return w.addElements(ctx, vals)
	}
	if w.n == 0 {
		w.buf = append(w.buf[:0], w.prefix...)
	} else {
		w.buf = append(w.buf, ", "...)
	}
	w.buf = append(w.buf, '(')
	for i, v := range vals {
		if i > 0 {
			w.buf = append(w.buf, ", "...)
		}
		w.buf = appendLiteral(w.buf, w.dialect, w.table.cols[i].kind, v)
	}
	w.buf = append(w.buf, ')')
	w.n++
	if len(w.buf) >= w.opts.BatchBytes {
		return w.flush(ctx)
	}
	return nil
}

// addElements adds a row to the arrays under way, and sends them once
// they are BatchBytes long.
func (w *writer) addElements(ctx context.Context, vals []any) error {
	w.size = 0
	for i, v := range vals {
		a := w.arrays[i]
		if w.n > 0 {
			a = append(a, ',')
		}
		a = appendElement(a, w.table.cols[i].kind, v)
		w.arrays[i] = a
		w.size += len(a)
	}
	w.n++
	if w.size >= w.opts.BatchBytes {
		return w.flush(ctx)
	}
	return nil
}

// arrayStatement returns the statement of the PostgreSQL arrays under way,
// and empties them.
func (w *writer) arrayStatement() []byte {
	b := append(w.buf[:0], w.prefix...)
	for i, a := range w.arrays {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, "'{"...)
		b = append(b, a...)
		b = append(b, "}'::"...)
		b = append(b, w.table.cols[i].dstType...)
		b = append(b, "[]"...)
		w.arrays[i] = a[:0]
	}
	return append(b, ')')
}

// flush sends the statement under way, if any.
func (w *writer) flush(ctx context.Context) error {
	if w.n == 0 {
		return nil
	}
	if w.pg {
		w.buf = w.arrayStatement()
	}
	var err error
	w.buf, err = w.send.send(ctx, statement{sql: w.buf, table: w.table.name, rows: w.n})
	w.n = 0
	return err
}

// statement is one INSERT of n rows into table.
type statement struct {
	sql   []byte
	table string
	rows  int
}

// sender runs statements on the target's transaction in a goroutine of
// its own, in the order sent, and reports progress after each.
type sender struct {
	tx       bun.Tx
	progress func(Progress)
	total    int64

	queue chan statement
	free  chan []byte // buffers of statements run, for reuse
	done  chan error  // the first error, once the queue is closed and drained
	stop  context.CancelFunc
}

// newSender starts a sender on tx. Its first error cancels the context
// it returns, which the reading side runs under, so that a failed write
// stops the copy at once.
func newSender(ctx context.Context, tx bun.Tx, progress func(Progress), total int64) (*sender, context.Context) {
	ctx, stop := context.WithCancel(ctx)
	s := &sender{tx: tx, progress: progress, total: total,
		queue: make(chan statement, 2), free: make(chan []byte, 4), done: make(chan error, 1), stop: stop}
	go s.run(ctx)
	return s, ctx
}

// run runs the statements queued until the queue is closed.
func (s *sender) run(ctx context.Context) {
	var err error
	var rows int64
	for st := range s.queue {
		if err != nil {
			continue // drained: the copy has failed
		}
		if _, err = s.tx.ExecContext(ctx, string(st.sql)); err != nil {
			err = fmt.Errorf("dbcopy: write %s: %w", st.table, err)
			s.stop()
			continue
		}
		rows += int64(st.rows)
		if s.progress != nil {
			s.progress(Progress{Table: st.table, Rows: rows, Total: s.total})
		}
		select {
		case s.free <- st.sql[:0]:
		default:
		}
	}
	s.done <- err
}

// send queues st and returns a buffer for the next statement.
func (s *sender) send(ctx context.Context, st statement) ([]byte, error) {
	select {
	case s.queue <- st:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case b := <-s.free:
		return b, nil
	default:
		return nil, nil
	}
}

// wait closes the queue, waits for the statements queued to run, and
// returns the first error of one.
func (s *sender) wait() error {
	close(s.queue)
	err := <-s.done
	s.stop()
	return err
}

// parentsFirst orders the rows of t so that every row comes after the
// row that each of its references to t (self) names: a reference with a
// NULL, or to the row itself, or to a key not in rows, waits for nothing
// (the last fails on insert, as it would have to). A cycle of references
// among the rows is an error.
func parentsFirst(t *table, self []foreignKey, rows [][]any) ([][]any, error) {
	key := func(row []any, cols []string) (string, bool) {
		var b []byte
		for _, name := range cols {
			i := t.colIndex(name)
			if row[i] == nil {
				return "", false
			}
			b = appendCanonical(b, t.cols[i].kind, row[i])
			b = append(b, 0)
		}
		return string(b), true
	}
	present := map[string]bool{} // keys of rows, per referenced column list
	for _, fk := range self {
		for _, row := range rows {
			if k, ok := key(row, fk.refs); ok {
				present[fmt.Sprint(fk.refs)+k] = true
			}
		}
	}
	placed := map[string]bool{}
	out := make([][]any, 0, len(rows))
	left := rows
	for len(left) > 0 {
		var next [][]any
		for _, row := range left {
			if ready(row, self, key, present, placed) {
				out = append(out, row)
				for _, fk := range self {
					if k, ok := key(row, fk.refs); ok {
						placed[fmt.Sprint(fk.refs)+k] = true
					}
				}
			} else {
				next = append(next, row)
			}
		}
		if len(next) == len(left) {
			return nil, fmt.Errorf("%d rows reference each other in a cycle", len(next))
		}
		left = next
	}
	return out, nil
}

// ready reports whether row may be inserted: each of its references to
// its own table is NULL, names itself, names no row, or names a row
// placed already.
func ready(row []any, self []foreignKey, key func([]any, []string) (string, bool), present, placed map[string]bool) bool {
	for _, fk := range self {
		k, ok := key(row, fk.cols)
		if !ok {
			continue
		}
		id := fmt.Sprint(fk.refs) + k
		if own, _ := key(row, fk.refs); own == k || !present[id] || placed[id] {
			continue
		}
		return false
	}
	return true
}
