package database

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"
)

// CopyFrom writes the rows of src into the columns of table with COPY in
// PostgreSQL's binary format, pgx encoding each value by its column's
// type, on conn (a connection of a PostgreSQL database, in a transaction
// begun on it or not), and returns how many it wrote.
func CopyFrom(ctx context.Context, conn bun.Conn, table string, columns []string, src pgx.CopyFromSource) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return errors.New("database: COPY needs PostgreSQL")
		}
		var err error
		n, err = c.Conn().CopyFrom(ctx, pgx.Identifier{table}, columns, src)
		return err
	})
	return n, err
}
