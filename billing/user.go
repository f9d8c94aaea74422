package billing

import (
	"context"

	"github.com/google/uuid"
)

// UserByID returns the user with the given id. The error wraps
// [tradekit.ErrNotFound] when there is none.
func (s *Store) UserByID(ctx context.Context, id uuid.UUID) (User, error) {
	var u User
	if err := s.db.NewSelect().Model(&u).Where("id = ?", id).Scan(ctx); err != nil {
		return User{}, notFound(err, "user %s", id)
	}
	return u, nil
}
