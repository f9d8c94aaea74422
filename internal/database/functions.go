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
// (cache_describe, see [Prepared]), PostgreSQL would plan each [Prepared]
// read every time it runs: half a millisecond and more for the heavy
// statements of the order path. So the pool makes each such read a
// PL/pgSQL function once, tradekit_q_ and a hash of its text and types,
// which returns what the read returns, and calls that: PL/pgSQL keeps the
// plan of each statement it runs for the life of the server's session,
// which a pooler keeps open from one client to the next, as it would a
// named prepared statement's. The function is made in the background the
// first time the read runs (the read runs as it is meanwhile); a role
// that may not create functions, or a read that no function can hold,
// runs as it is, and the log says so once.
//
// Where statements are prepared (cache_statement), a [Prepared] read
// needs no function: in a batch it runs as the statement prepared on the
// connection (see [pgConn.named]).

// functions are the functions of the [Prepared] reads of one pool.
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
// failed with err.
func (c *pgConnector) forget(p *Prepared, err error) {
	c.functions.mu.Lock()
	if f := c.functions.calls[p]; f != nil {
		f.failed = true
	}
	c.functions.mu.Unlock()
	c.functions.once.Do(func() {
		c.log.Warn("database: a statement's function failed; it runs as it is", "err", err)
	})
}

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
	call, err := c.createFunction(ctx, p.text)
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

// createFunction creates, unless it exists, the function that returns
// what the read text returns, and returns the text of its call.
func (c *pgConnector) createFunction(ctx context.Context, text string) (string, error) {
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
	if len(sd.Fields) == 0 {
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
	h := sha256.Sum256([]byte(text + "\x00" + strings.Join(types, ",")))
	name := "tradekit_q_" + hex.EncodeToString(h[:10])
	var returns, columns []string
	for i, fd := range sd.Fields {
		returns = append(returns, fmt.Sprintf("tk_%d %s", i+1, results[i]))
		columns = append(columns, fmt.Sprintf("tk_%d AS %s", i+1, pgx.Identifier{fd.Name}.Sanitize()))
	}
	args := make([]string, len(params))
	for i := range params {
		args[i] = fmt.Sprintf("$%d", i+1)
	}
	call := "SELECT " + strings.Join(columns, ", ") + " FROM " + name + "(" + strings.Join(args, ", ") + ")"
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_proc WHERE proname = $1)", pgx.QueryExecModeExec, name).Scan(&exists); err != nil {
		return "", err
	}
	if exists {
		return call, nil
	}
	create := "CREATE OR REPLACE FUNCTION " + name + "(" + strings.Join(params, ", ") + ") RETURNS TABLE (" +
		strings.Join(returns, ", ") + ") LANGUAGE plpgsql VOLATILE AS $tradekit$ BEGIN RETURN QUERY " + text + "; END $tradekit$"
	if _, err := conn.Exec(ctx, create); err != nil {
		// Another instance may have made it at the same moment.
		if err2 := conn.QueryRow(ctx, "SELECT EXISTS (SELECT FROM pg_proc WHERE proname = $1)", pgx.QueryExecModeExec, name).Scan(&exists); err2 != nil || !exists {
			return "", err
		}
	}
	return call, nil
}
