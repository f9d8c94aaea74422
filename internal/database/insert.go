package database

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// InsertRows returns the statement that inserts rows, a pointer to a bun
// model's struct or to a slice of them, every column set to its field's
// value, followed by suffix when it is not "" (an ON CONFLICT clause,
// say; it holds no parameter). It is what
//
//	db.NewInsert().Model(rows)
//
// writes, as a [Prepared] statement, for [ExecWithNext] (or to Exec):
// the values travel as parameters, so PostgreSQL parses and plans it once
// per connection and number of rows, not on every order. Behind a pooler
// that keeps no prepared statement it runs as text, its values written
// into it, as bun's does: the call of a function with dozens of values
// would cost more than the planning it saves. bun writes the
// values into the text, and DEFAULT for a nil pointer: here a nil pointer
// is NULL, so the model's nullable columns must have no other default,
// and, as for [UpdateColumns], its fields' values must be what the
// driver takes as they are (no nullzero, json or msgpack tags). It panics
// when rows is neither.
func InsertRows(db bun.IDB, rows any, suffix string) Statement {
	v := reflect.ValueOf(rows).Elem()
	var elems []reflect.Value
	switch v.Kind() {
	case reflect.Struct:
		elems = []reflect.Value{v}
	case reflect.Slice:
		for i := range v.Len() {
			elems = append(elems, v.Index(i))
		}
	default:
		panic(fmt.Sprintf("database: InsertRows of %s, not a pointer to a struct or to a slice", v.Type()))
	}
	if len(elems) == 0 {
		panic("database: InsertRows of no row")
	}
	table := db.Dialect().Tables().Get(elems[0].Type())
	params := make([]any, 0, len(elems)*len(table.Fields))
	for _, e := range elems {
		for _, f := range table.Fields {
			params = append(params, f.Value(e).Interface())
		}
	}
	return rowsInsert(table, len(elems), suffix).With(db, params...)
}

// rowsInserts are the statements of InsertRows, by table, number of rows
// and suffix.
var rowsInserts sync.Map

// rowsInsert returns the statement of InsertRows for n rows of table,
// made once. Its parameters are the rows' fields, row after row, in the
// table's order of fields.
func rowsInsert(table *schema.Table, n int, suffix string) *Prepared {
	key := table.Name + " " + strconv.Itoa(n) + " " + suffix
	if p, ok := rowsInserts.Load(key); ok {
		return p.(*Prepared)
	}
	columns := make([]string, len(table.Fields))
	for i, f := range table.Fields {
		columns[i] = string(f.SQLName)
	}
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + ")"
	text := "INSERT INTO ? (" + strings.Join(columns, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
	if suffix != "" {
		text += " " + suffix
	}
	insert := NewPrepared("insert "+key, func(db bun.IDB, params ...any) schema.QueryAppender {
		return db.NewRaw(text, append([]any{table.SQLName}, params...)...)
	})
	insert.asText = true
	p, _ := rowsInserts.LoadOrStore(key, insert)
	return p.(*Prepared)
}
