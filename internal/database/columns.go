package database

import (
	"reflect"
	"strings"

	"github.com/uptrace/bun/dialect/pgdialect"
	"github.com/uptrace/bun/schema"
)

// columnNames holds the models' column names, which are the same in both
// dialects.
var columnNames = schema.NewTables(pgdialect.New())

// PrefixedColumns returns the columns of the model of type typ, in a
// table aliased alias, each selected as alias_column: what a field of
// that type tagged bun:"embed:alias_" scans, so that one statement can
// read several models that share column names.
func PrefixedColumns(typ reflect.Type, alias string) string {
	var cols []string
	for _, f := range columnNames.Get(typ).Fields {
		cols = append(cols, alias+"."+f.Name+" AS "+alias+"_"+f.Name)
	}
	return strings.Join(cols, ", ")
}

// Columns returns the columns of the model of type typ, in a table
// aliased alias: alias.column, … (column, … for no alias), a list that,
// unlike *, stays the same when a migration adds a column.
func Columns(typ reflect.Type, alias string) string {
	if alias != "" {
		alias += "."
	}
	var cols []string
	for _, f := range columnNames.Get(typ).Fields {
		cols = append(cols, alias+f.Name)
	}
	return strings.Join(cols, ", ")
}
