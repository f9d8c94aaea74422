package marketdata

import (
	"reflect"
	"sync"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect"

	"github.com/tradekit/tradekit/internal/database"
)

// Pieces of SQL naming the assets table, for the statements of other
// packages whose one round trip is a measured target (an order's check
// and placement, the paper matcher's pass): they embed a piece in their
// own statement rather than call a [Store] method, so the assets table
// is named in marketdata's source only, and the statement stays one. The
// arguments are written into the SQL as they are: pass table aliases and
// expressions of the caller's query, never input.

// joinedAssetColumns is the columns of [Asset] that [JoinAsset] selects
// for alias a, the alias the order path uses, built once.
var joinedAssetColumns = sync.OnceValue(func() string {
	return database.PrefixedColumns(reflect.TypeFor[Asset](), "a")
})

// JoinAsset returns the modifier of a select query that left-joins, as
// alias, the asset whose id is id (a parameter, or an expression of the
// query), and selects its columns, each named alias_column: those of
// [Asset], and alias_prices_version, the version of its prices (see
// [PriceVersion]); all NULL when there is no such asset. For alias a:
//
//	SELECT …, a.id AS a_id, a.symbol AS a_symbol, …, a.prices_version AS a_prices_version
//	… LEFT JOIN assets AS a ON a.id = ?
func JoinAsset(alias string, id any) func(*bun.SelectQuery) *bun.SelectQuery {
	cols := joinedAssetColumns()
	if alias != "a" {
		cols = database.PrefixedColumns(reflect.TypeFor[Asset](), alias)
	}
	return func(q *bun.SelectQuery) *bun.SelectQuery {
		return q.ColumnExpr(cols+", "+alias+".prices_version AS "+alias+"_prices_version").
			Join("LEFT JOIN assets AS "+alias+" ON "+alias+".id = ?", id)
	}
}

// AssetJSONBySymbol returns a scalar subquery, in the JSON functions of
// dialect d, of the asset whose symbol is the next parameter, as the
// object {"id": …, "type": …, "prices_version": …}; NULL when there is
// no such asset. The symbol must be normalized ([NormalizeSymbol]).
func AssetJSONBySymbol(d dialect.Name) string {
	if d == dialect.SQLite {
		return "(SELECT json_object('id', id, 'type', type, 'prices_version', prices_version) FROM assets WHERE symbol = ?)"
	}
	return "(SELECT json_build_object('id', id, 'type', type, 'prices_version', prices_version) FROM assets WHERE symbol = ?)"
}

// AssetVersionsOf returns the end of a select statement that reads the id
// and the price version (prices_version, see [PriceVersion]) of the
// assets whose ids the column id of from gives, joining each by its
// primary key; from is a table expression of the statement (a common
// table expression, say). For from "ids" and id "ids.id":
//
//	SELECT assets.id, assets.prices_version FROM ids JOIN assets ON assets.id = ids.id
func AssetVersionsOf(from, id string) string {
	return "SELECT assets.id, assets.prices_version FROM " + from + " JOIN assets ON assets.id = " + id
}
