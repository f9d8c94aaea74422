package database

import (
	"context"
	"database/sql/driver"
	"io"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
)

// pgConn is a connection of a PostgreSQL *sql.DB: stdlib's, which can
// also run a query as the last statement of a batch, so that a [Tx]'s
// BEGIN and the statements queued before a read (a lock, say) travel
// with the read, in one message, instead of in a round trip of their
// own before it. database/sql reads the query's rows, as it reads any.
type pgConn struct {
	*stdlib.Conn
	c *pgConnector
}

// named returns qs for a batch, which runs in exec mode: with each
// statement that takes parameters prepared on the connection, by name,
// and named by its name instead of its text, when [Prepared] statements
// run prepared (cache_statement); pgx then binds and executes each as
// the statement PostgreSQL parsed and planned already, instead of
// sending its text to be parsed and planned again. Statements without
// parameters (BEGIN, bun's, with their values in their text) run
// unnamed. A statement is prepared once per connection, in a round trip
// of its own. qs is left as it is.
func (c *pgConn) named(ctx context.Context, qs []*pgx.QueuedQuery) ([]*pgx.QueuedQuery, error) {
	if c.c.execMode() != pgx.QueryExecModeCacheStatement {
		return qs, nil
	}
	out := make([]*pgx.QueuedQuery, len(qs))
	for i, q := range qs {
		out[i] = q
		if len(q.Arguments) == 0 {
			continue
		}
		name, err := c.prepareNamed(ctx, q.SQL)
		if err != nil {
			return nil, err
		}
		out[i] = &pgx.QueuedQuery{SQL: name, Arguments: q.Arguments}
	}
	return out, nil
}

// lost reports whether err, the error of a batch that began a
// transaction, says that a transaction pooler lost a statement prepared
// by name (see [pgConnector.noteErr]), so that statements run unnamed
// from now on; it then rolls back what the batch began, for the batch to
// be sent again: nothing of it ran.
func (c *pgConn) lost(ctx context.Context, err error) bool {
	if !c.c.noteErr(err) {
		return false
	}
	_, rerr := c.Conn.Conn().Exec(context.WithoutCancel(ctx), "ROLLBACK")
	return rerr == nil
}

// prepareNamed prepares the statement query on the connection, unless it
// is there already, and returns its name, which pgx runs it by. The name
// is not the text: once the pool has found a pooler that loses prepared
// statements (see [pgConnector.noteErr]), statements go by their text
// again, and pgx then runs them unnamed rather than as the statement it
// prepared.
func (c *pgConn) prepareNamed(ctx context.Context, query string) (string, error) {
	name := c.c.stmtName(query)
	if _, err := c.Conn.Conn().Prepare(ctx, name, query); err != nil {
		return "", err
	}
	return name, nil
}

// ExecContext implements driver.ExecerContext: stdlib's, with a
// [Prepared] statement prepared by name first (see prepareOne).
func (c *pgConn) ExecContext(ctx context.Context, query string, argsV []driver.NamedValue) (driver.Result, error) {
	query, err := c.prepareOne(ctx, query, argsV)
	if err != nil {
		return nil, err
	}
	return c.Conn.ExecContext(ctx, query, argsV)
}

// prepareOne prepares query by name, as named does for a batch, when
// it is a [Prepared] statement that runs prepared (its first argument
// says cache_statement), and returns what to run: its name then, else
// query itself.
func (c *pgConn) prepareOne(ctx context.Context, query string, argsV []driver.NamedValue) (string, error) {
	if len(argsV) < 2 || argsV[0].Value != pgx.QueryExecModeCacheStatement || c.c.execMode() != pgx.QueryExecModeCacheStatement {
		return query, nil
	}
	return c.prepareNamed(ctx, query)
}

// beforeKey is the key of the context value that holds the statements a
// query follows in its batch.
type beforeKey struct{}

// withBefore returns ctx, for a query that runs as the last statement of
// a batch, after stmts.
func withBefore(ctx context.Context, stmts []*pgx.QueuedQuery) context.Context {
	return context.WithValue(ctx, beforeKey{}, stmts)
}

// QueryContext implements driver.QueryerContext: stdlib's, unless ctx
// holds statements to run before query (see withBefore). Then they go
// with it in one pgx batch, in the connection's mode (exec, with those
// that take parameters prepared: see [pgConn.named]), each of them ran
// before query starts, and the first error among them is the query's.
func (c *pgConn) QueryContext(ctx context.Context, query string, argsV []driver.NamedValue) (driver.Rows, error) {
	before, _ := ctx.Value(beforeKey{}).([]*pgx.QueuedQuery)
	if before == nil {
		query, err := c.prepareOne(ctx, query, argsV)
		if err != nil {
			return nil, err
		}
		return c.Conn.QueryContext(ctx, query, argsV)
	}
	args := make([]any, len(argsV))
	for i, a := range argsV {
		args[i] = a.Value
	}
	qs := append(before[:len(before):len(before)], &pgx.QueuedQuery{SQL: query, Arguments: withoutMode(args)})
	rows, err := c.queryAfter(ctx, qs)
	if err != nil && before[0].SQL == "BEGIN" && c.lost(ctx, err) {
		rows, err = c.queryAfter(ctx, qs)
	}
	c.c.forgetAfter(qs, err)
	return rows, err
}

// queryAfter runs the statements qs in one batch and returns the rows of
// the last, the first error among them else.
func (c *pgConn) queryAfter(ctx context.Context, qs []*pgx.QueuedQuery) (driver.Rows, error) {
	qs, err := c.named(ctx, qs)
	if err != nil {
		return nil, err
	}
	br := c.Conn.Conn().SendBatch(ctx, &pgx.Batch{QueuedQueries: qs})
	for range len(qs) - 1 {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return nil, err
		}
	}
	rows, err := br.Query()
	if err == nil {
		// As stdlib does, the first row is read now, so that an error
		// comes back from the query rather than from its rows.
		if more := rows.Next(); rows.Err() == nil {
			return &batchRows{br: br, rows: rows, m: c.Conn.Conn().TypeMap(), first: true, more: more}, nil
		}
		err = rows.Err()
		rows.Close()
	}
	br.Close()
	return nil, err
}

// batchRows are the rows of the last query of a batch, as driver.Rows,
// their values what stdlib's rows give for each type.
type batchRows struct {
	br     pgx.BatchResults
	rows   pgx.Rows
	m      *pgtype.Map
	values []func(src []byte) (driver.Value, error)
	// first reports that the first row was read, and more whether there
	// was one.
	first, more bool
}

// Columns implements driver.Rows.
func (r *batchRows) Columns() []string {
	fds := r.rows.FieldDescriptions()
	names := make([]string, len(fds))
	for i, fd := range fds {
		names[i] = fd.Name
	}
	return names
}

// Close implements driver.Rows: it reads what is left of the batch.
func (r *batchRows) Close() error {
	r.rows.Close()
	return r.br.Close()
}

// Next implements driver.Rows.
func (r *batchRows) Next(dest []driver.Value) error {
	more := r.more
	if r.first {
		r.first = false
	} else {
		more = r.rows.Next()
	}
	if !more {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return io.EOF
	}
	if r.values == nil {
		r.values = r.valueFuncs()
	}
	for i, raw := range r.rows.RawValues() {
		if raw == nil {
			dest[i] = nil
			continue
		}
		v, err := r.values[i](raw)
		if err != nil {
			return err
		}
		dest[i] = v
	}
	return nil
}

// valueFuncs returns, for each column, what makes its driver.Value from
// the bytes the server sent: the values stdlib's rows give (a bool, an
// int64, a float64, a time.Time, bytes for bytea and JSON, else a
// string), so that a query scans alike whichever way it ran.
func (r *batchRows) valueFuncs() []func([]byte) (driver.Value, error) {
	fds := r.rows.FieldDescriptions()
	fs := make([]func([]byte) (driver.Value, error), len(fds))
	for i, fd := range fds {
		oid, format := fd.DataTypeOID, fd.Format
		switch oid {
		case pgtype.BoolOID:
			fs[i] = valueFunc(r.m, oid, format, func(d bool) (driver.Value, error) { return d, nil })
		case pgtype.ByteaOID, pgtype.JSONOID, pgtype.JSONBOID, pgtype.XMLOID:
			fs[i] = valueFunc(r.m, oid, format, func(d []byte) (driver.Value, error) { return d, nil })
		case pgtype.CIDOID, pgtype.OIDOID, pgtype.XIDOID:
			fs[i] = valueFunc(r.m, oid, format, func(d pgtype.Uint32) (driver.Value, error) { return d.Value() })
		case pgtype.DateOID:
			fs[i] = valueFunc(r.m, oid, format, func(d pgtype.Date) (driver.Value, error) { return d.Value() })
		case pgtype.Float4OID:
			fs[i] = valueFunc(r.m, oid, format, func(d float32) (driver.Value, error) { return float64(d), nil })
		case pgtype.Float8OID:
			fs[i] = valueFunc(r.m, oid, format, func(d float64) (driver.Value, error) { return d, nil })
		case pgtype.Int2OID:
			fs[i] = valueFunc(r.m, oid, format, func(d int16) (driver.Value, error) { return int64(d), nil })
		case pgtype.Int4OID:
			fs[i] = valueFunc(r.m, oid, format, func(d int32) (driver.Value, error) { return int64(d), nil })
		case pgtype.Int8OID:
			fs[i] = valueFunc(r.m, oid, format, func(d int64) (driver.Value, error) { return d, nil })
		case pgtype.TimestampOID:
			fs[i] = valueFunc(r.m, oid, format, func(d pgtype.Timestamp) (driver.Value, error) { return d.Value() })
		case pgtype.TimestamptzOID:
			fs[i] = valueFunc(r.m, oid, format, func(d pgtype.Timestamptz) (driver.Value, error) { return d.Value() })
		default:
			fs[i] = valueFunc(r.m, oid, format, func(d string) (driver.Value, error) { return d, nil })
		}
	}
	return fs
}

// valueFunc returns what scans a column's bytes into a T, as pgx's type
// map plans it, and makes the driver.Value of that with value.
func valueFunc[T any](m *pgtype.Map, oid uint32, format int16, value func(T) (driver.Value, error)) func([]byte) (driver.Value, error) {
	var d T
	plan := m.PlanScan(oid, format, &d)
	return func(src []byte) (driver.Value, error) {
		if err := plan.Scan(src, &d); err != nil {
			return nil, err
		}
		return value(d)
	}
}
