package database

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// Behind a transaction pooler that keeps no prepared statement
// (cache_describe, see [Prepared]), PostgreSQL would parse and plan each
// [Prepared] statement every time it runs: half a millisecond and more
// for the heavy reads of the order path, a tenth of one for each of its
// writes. So the pool makes each such statement a PL/pgSQL function
// once, tradekit_q_ and a hash of its text and types, and calls that:
// PL/pgSQL keeps the plan of each statement it runs for the life of the
// server's session, which a pooler keeps open from one client to the
// next, as it would a named prepared statement's.
//
//   - A read returns what the read returns (RETURN QUERY).
//   - A write with RETURNING returns the rows it returns (RETURN QUERY
//     over a WITH that holds the write).
//   - A write without returns the number of rows it changed (GET
//     DIAGNOSTICS … ROW_COUNT), which [Prepared.Exec] gives as the
//     result's RowsAffected.
//
// The function is made in the background the first time the statement
// runs (the statement runs as it is meanwhile); a role that may not
// create functions, or a statement that no function can hold, runs as it
// is, and the log says so once. A call that fails as a call (the
// function dropped, or no longer fitting its statement) has the
// statement run as it is from then on: once more at once outside a
// transaction; in a batch, the transaction fails, and all the pool's
// statements run as they are from then on (see forgetAfter).
//
// Where statements are prepared (cache_statement), a [Prepared]
// statement needs no function: in a batch it runs as the statement
// prepared on the connection (see [pgConn.named]).

// functions are the functions of the [Prepared] statements of one pool.
type functions struct {
	mu    sync.Mutex
	calls map[*Prepared]*function
	// once logs that a function could not be made.
	once sync.Once
}

// function is the state of one read's function.
type function struct {
	call   string // the call, once the function exists
	failed bool   // no function: the read runs as it is
}

// call returns the text that runs p through its function, "" while there
// is none; the first time, it has the function made in the background.
// The call of a write without RETURNING returns one row: the number of
// rows the write changed.
func (c *pgConnector) call(p *Prepared) string {
	fs := &c.functions
	fs.mu.Lock()
	defer fs.mu.Unlock()
	f := fs.calls[p]
	if f == nil {
		if fs.calls == nil {
			fs.calls = map[*Prepared]*function{}
		}
		f = &function{}
		fs.calls[p] = f
		go c.makeFunction(p, f)
	}
	if f.failed {
		return ""
	}
	return f.call
}

// forget has p run as it is from now on, because its function's call
// failed with err; a nil p, every statement of the pool, because a call
// in a batch failed (which of the batch's is not known).
func (c *pgConnector) forget(p *Prepared, err error) {
	c.functions.mu.Lock()
	for q, f := range c.functions.calls {
		if p == nil || q == p {
			f.failed = true
		}
	}
	c.functions.mu.Unlock()
	c.functions.once.Do(func() {
		c.log.Warn("database: a statement's function failed; it runs as it is", "err", err)
	})
}

// forgetAfter has every statement of the pool run as it is from now on
// when err, the error of the batch qs, says that a function's call
// failed as a call and qs holds one: which of the batch's it was is not
// known.
func (c *pgConnector) forgetAfter(qs []*pgx.QueuedQuery, err error) {
	if err == nil || !isFunctionErr(err) {
		return
	}
	for _, q := range qs {
		if strings.Contains(q.SQL, functionPrefix) {
			c.forget(nil, err)
			return
		}
	}
}

// functionPrefix begins the name of each function made for a statement.
const functionPrefix = "tradekit_q_"

// isFunctionErr reports whether err says that a function's call failed
// as a call (the function missing, or no longer fitting its statement)
// rather than as the statement.
func isFunctionErr(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "42883", // undefined_function: dropped
		"42804", // datatype_mismatch: "structure of query does not match function result type"
		"42P13", // invalid_function_definition
		"0A000": // feature_not_supported
		return true
	}
	return false
}

// makeFunction makes the function of p, or records that there is none.
func (c *pgConnector) makeFunction(p *Prepared, f *function) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	call, err := c.createFunction(ctx, p.text, p.read)
	c.functions.mu.Lock()
	f.call, f.failed = call, err != nil
	c.functions.mu.Unlock()
	if err != nil && !errors.Is(err, puddle.ErrClosedPool) { // closed meanwhile: nothing to say
		c.functions.once.Do(func() {
			c.log.Warn("database: a statement could not be made a function; it runs as it is, planned every time "+
				"behind a pooler without prepared statements, and in a round trip of its own after a lock (the role "+
				"needs CREATE on its schema)", "err", err)
		})
	}
}

// createFunction creates, unless it exists, the function that runs the
// statement text (a SELECT when read is true, else a write) and returns
// what it returns, and returns the text of its call.
func (c *pgConnector) createFunction(ctx context.Context, text string, read bool) (string, error) {
	pc, err := c.pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer pc.Release()
	conn := pc.Conn()
	sd, err := conn.PgConn().Prepare(ctx, "", text, nil)
	if err != nil {
		return "", err
	}
	if read && len(sd.Fields) == 0 {
		return "", errors.New("the statement returns no rows")
	}
	n := len(sd.ParamOIDs) + len(sd.Fields)
	oids, mods := make([]int64, 0, n), make([]int32, 0, n)
	for _, o := range sd.ParamOIDs {
		oids, mods = append(oids, int64(o)), append(mods, -1)
	}
	for _, fd := range sd.Fields {
		oids, mods = append(oids, int64(fd.DataTypeOID)), append(mods, fd.TypeModifier)
	}
	var types []string
	err = conn.QueryRow(ctx, "SELECT array_agg(format_type(t::oid, m) ORDER BY n) FROM unnest($1::int8[], $2::int4[]) WITH ORDINALITY AS x(t, m, n)",
		pgx.QueryExecModeExec, oids, mods).Scan(&types)
	if err != nil {
		return "", err
	}
	params, results := types[:len(sd.ParamOIDs)], types[len(sd.ParamOIDs):]
	// The function's columns are the statement's, by name, when no two
	// share one: its call is then SELECT *, which PostgreSQL parses
	// faster than a list that names each (for the order check's 45
	// columns, 0.04 ms a call). In the body a name means the column, not
	// the output parameter (variable_conflict). Else they are tk_1, tk_2,
	// …, which the call renames.
	named := len(sd.Fields) > 0
	seen := make(map[string]bool, len(sd.Fields))
	for _, fd := range sd.Fields {
		named = named && fd.Name != "" && fd.Name != "?column?" && !seen[fd.Name]
		seen[fd.Name] = true
	}
	scheme := "tk"
	if named {
		scheme = "named"
	}
	h := sha256.Sum256([]byte(text + "\x00" + strings.Join(types, ",") + "\x00" + scheme))
	name := functionPrefix + hex.EncodeToString(h[:10])
	var returns, columns []string
	for i, fd := range sd.Fields {
		if named {
			returns = append(returns, pgx.Identifier{fd.Name}.Sanitize()+" "+results[i])
			continue
		}
		returns = append(returns, fmt.Sprintf("tk_%d %s", i+1, results[i]))
		columns = append(columns, fmt.Sprintf("tk_%d AS %s", i+1, pgx.Identifier{fd.Name}.Sanitize()))
	}
	args := make([]string, len(params))
	for i := range params {
		args[i] = fmt.Sprintf("$%d", i+1)
	}
	call, options := "SELECT * FROM "+name+"("+strings.Join(args, ", ")+")", "#variable_conflict use_column\n"
	if !named {
		call, options = "SELECT "+strings.Join(columns, ", ")+" FROM "+name+"("+strings.Join(args, ", ")+")", ""
	}
	result, body := "TABLE ("+strings.Join(returns, ", ")+")", options+"BEGIN RETURN QUERY "+text+"; END"
	switch {
	case len(sd.Fields) == 0: // a write that returns the rows it changed
		call = "SELECT " + name + "(" + strings.Join(args, ", ") + ")"
		result, body = "bigint", "DECLARE tk_n bigint; BEGIN "+text+"; GET DIAGNOSTICS tk_n = ROW_COUNT; RETURN tk_n; END"
	case !read: // a write with RETURNING
		body = options + "BEGIN RETURN QUERY WITH tk_w AS (" + text + ") SELECT * FROM tk_w; END"
	}
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_proc WHERE proname = $1)", pgx.QueryExecModeExec, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return call, nil
	}
	create := "CREATE OR REPLACE FUNCTION " + name + "(" + strings.Join(params, ", ") + ") RETURNS " + result +
		" LANGUAGE plpgsql VOLATILE AS $tradekit$ " + body + " $tradekit$"
	if _, err := conn.Exec(ctx, create); err != nil {
		// Another instance may have made it at the same moment.
		if err2 := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_proc WHERE proname = $1)", pgx.QueryExecModeExec, name).Scan(&exists); err2 != nil || !exists {
			return "", err
		}
	}
	return call, nil
}
