package database

import (
	"errors"
	"strings"

	"github.com/uptrace/bun/driver/pgdriver"
)

// IsUniqueViolation reports whether err is a unique-constraint violation,
// in either database.
func IsUniqueViolation(err error) bool {
	var pgErr pgdriver.Error
	if errors.As(err, &pgErr) {
		return pgErr.Field('C') == "23505"
	}
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}
