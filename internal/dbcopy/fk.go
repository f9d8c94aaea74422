package dbcopy

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
)

// pgForeignKey is a foreign-key constraint of a PostgreSQL table, as
// pg_get_constraintdef writes it.
type pgForeignKey struct {
	table, name, def string
}

// dropForeignKeys drops the foreign-key constraints of the tables in the
// transaction tx on PostgreSQL, and returns them for [addForeignKeys] to
// put back once the rows are in. PostgreSQL checks a foreign key row by
// row, with a query per inserted row, which took most of a load's time;
// added back, a constraint checks every row in one join. Both happen in
// the copy's transaction: a copy that fails or is killed leaves the
// constraints as they were, and one that commits has had every row
// checked. Dropping a constraint takes the table's owner; a target the
// copy may not alter keeps its constraints and is loaded row-checked.
func dropForeignKeys(ctx context.Context, tx bun.Tx, tables []*table) ([]pgForeignKey, error) {
	var fks []pgForeignKey
	rows, err := tx.QueryContext(ctx, `SELECT cl.relname, c.conname, pg_get_constraintdef(c.oid)
		FROM pg_constraint c JOIN pg_class cl ON cl.oid = c.conrelid
		WHERE c.contype = 'f' AND cl.relnamespace = current_schema()::regnamespace
		ORDER BY cl.relname, c.conname`)
	if err != nil {
		return nil, fmt.Errorf("dbcopy: the target's foreign keys: %w", err)
	}
	for rows.Next() {
		var fk pgForeignKey
		if err := rows.Scan(&fk.table, &fk.name, &fk.def); err != nil {
			rows.Close()
			return nil, fmt.Errorf("dbcopy: the target's foreign keys: %w", err)
		}
		if slices.ContainsFunc(tables, func(t *table) bool { return t.name == fk.table }) {
			fks = append(fks, fk)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("dbcopy: the target's foreign keys: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "SAVEPOINT dbcopy_fks"); err != nil {
		return nil, fmt.Errorf("dbcopy: %w", err)
	}
	for _, fk := range fks {
		if _, err := tx.NewRaw("ALTER TABLE ? DROP CONSTRAINT ?", bun.Ident(fk.table), bun.Ident(fk.name)).Exec(ctx); err != nil {
			// Not the owner, say: keep every constraint, checked row by row.
			if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO SAVEPOINT dbcopy_fks"); rerr != nil {
				return nil, fmt.Errorf("dbcopy: %w", rerr)
			}
			return nil, nil
		}
	}
	return fks, nil
}

// addForeignKeys adds back the constraints that [dropForeignKeys]
// dropped, checking every row. A row that breaks one fails the copy,
// naming the table and the constraint.
func addForeignKeys(ctx context.Context, tx bun.Tx, fks []pgForeignKey) error {
	for _, fk := range fks {
		if _, err := tx.ExecContext(ctx, "ALTER TABLE "+quoteIdent(fk.table)+" ADD CONSTRAINT "+quoteIdent(fk.name)+" "+fk.def); err != nil {
			return fmt.Errorf("dbcopy: %s: the foreign key %s: %w", fk.table, fk.name, err)
		}
	}
	return nil
}
