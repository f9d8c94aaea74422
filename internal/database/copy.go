package database

import (
	"context"
	"errors"
	"io"

	"github.com/uptrace/bun"
)

// CopyFrom runs stmt, a COPY … FROM STDIN statement, on conn (a
// connection of a PostgreSQL database, in a transaction begun on it or
// not), with what r holds as its input, in the format stmt names (text
// unless it says otherwise), and returns how many rows it wrote. It is
// pgx's CopyFrom of the wire protocol: r streams to the server as it is
// read.
func CopyFrom(ctx context.Context, conn bun.Conn, stmt string, r io.Reader) (int64, error) {
	var n int64
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(*pgConn)
		if !ok {
			return errors.New("database: COPY needs PostgreSQL")
		}
		tag, err := c.Conn.Conn().PgConn().CopyFrom(ctx, r, stmt)
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
