package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// UpdateColumns sets the columns of model's row, found by its primary
// key, to model's values, where the column where holds whereValue too,
// and returns how many rows it changed (0 or 1). It is what
//
//	db.NewUpdate().Model(model).Column(columns...).WherePK().Where("<where> = ?", whereValue)
//
// does, as a [Prepared] statement: on PostgreSQL the values travel as
// parameters, and the statement is parsed and planned once per
// connection and set of columns, not on every call. That matters for the
// updates a hot path makes on every order (bun writes its values into
// the statement's text, which PostgreSQL then plans each time). model is
// a pointer to a struct of a bun model; its fields' values must be what
// the driver takes as they are (strings, numbers, times, UUIDs, decimals,
// pointers to them for NULL), not values that bun converts by a tag of
// its own (nullzero, json, msgpack).
func UpdateColumns(ctx context.Context, db bun.IDB, model any, columns []string, where string, whereValue any) (int64, error) {
	p, params, err := columnUpdateOf(db, model, columns, where, "")
	if err != nil {
		return 0, err
	}
	res, err := p.Exec(ctx, db, append(params, whereValue)...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// UpdateColumnsReturning is [UpdateColumns] with a RETURNING clause:
// the expressions returning of the changed row are scanned into dest, as
// bun's Scan scans a row. It reports whether a row changed.
func UpdateColumnsReturning(ctx context.Context, db bun.IDB, model any, columns []string, where string, whereValue any, returning string, dest any) (bool, error) {
	p, params, err := columnUpdateOf(db, model, columns, where, returning)
	if err != nil {
		return false, err
	}
	err = p.Scan(ctx, db, dest, append(params, whereValue)...)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// ColumnsUpdate returns the statement that sets the columns of model's
// row, found by its primary key, to model's values, for [ExecWithNext]:
// what db.NewUpdate().Model(model).Column(columns...).WherePK() makes,
// prepared, as [UpdateColumns] runs it. It panics when model has no such
// column.
func ColumnsUpdate(db bun.IDB, model any, columns ...string) Statement {
	p, params, err := columnUpdateOf(db, model, columns, "", "")
	if err != nil {
		panic(err)
	}
	return p.With(db, params...)
}

// columnUpdateOf returns the statement of UpdateColumns for model,
// columns, where and returning, with its parameters but where's value.
func columnUpdateOf(db bun.IDB, model any, columns []string, where, returning string) (*Prepared, []any, error) {
	v := reflect.ValueOf(model).Elem()
	table := db.Dialect().Tables().Get(v.Type())
	params := make([]any, 0, len(columns)+len(table.PKs)+1)
	for _, c := range columns {
		f, ok := table.FieldMap[c]
		if !ok {
			return nil, nil, fmt.Errorf("database: update %s: no column %s", table.Name, c)
		}
		params = append(params, f.Value(v).Interface())
	}
	for _, pk := range table.PKs {
		params = append(params, pk.Value(v).Interface())
	}
	return columnUpdate(table, columns, where, returning), params, nil
}

// columnUpdates are the statements of UpdateColumns, by table, columns
// and condition.
var columnUpdates sync.Map

// columnUpdate returns the statement of UpdateColumns for table, columns,
// where and returning (none when ""), made once. Its parameters are the
// columns' values, the primary key's, and where's.
func columnUpdate(table *schema.Table, columns []string, where, returning string) *Prepared {
	key := table.Name + " " + strings.Join(columns, ",") + " " + where + " " + returning
	if p, ok := columnUpdates.Load(key); ok {
		return p.(*Prepared)
	}
	p, _ := columnUpdates.LoadOrStore(key, NewPrepared("update "+key, func(db bun.IDB, params ...any) schema.QueryAppender {
		q := db.NewUpdate().TableExpr("?", table.SQLName)
		for i, c := range columns {
			q = q.Set("? = ?", bun.Ident(c), params[i])
		}
		n := len(columns)
		for i, pk := range table.PKs {
			q = q.Where("? = ?", pk.SQLName, params[n+i])
		}
		if where != "" {
			q = q.Where("? = ?", bun.Ident(where), params[n+len(table.PKs)])
		}
		if returning != "" {
			q = q.Returning(returning)
		}
		return q
	}))
	return p.(*Prepared)
}
