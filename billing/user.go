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

// SetAdmin makes the user with the given id an administrator of their
// account when admin is true, who may create and delete the account's API
// keys and invite members, or a member when it is false. It returns the
// user as stored. The error wraps [tradekit.ErrNotFound] when there is no
// such user.
func (s *Store) SetAdmin(ctx context.Context, userID uuid.UUID, admin bool) (User, error) {
	var u User
	err := s.db.NewUpdate().Model(&u).Set("is_admin = ?", admin).Where("id = ?", userID).Returning("*").Scan(ctx)
	if err != nil {
		return User{}, notFound(err, "user %s", userID)
	}
	return u, nil
}
