package copytrading

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/internal/database"
)

// ControlsPatch changes some of a follow's controls: nil fields keep
// their values. The percentages are above 0, with at most 4 decimal
// places, and at most 100 %, but for ScalingPct, which is at most
// 1000 %: a copy is at most ten times the leader's trade in proportion.
// (Copies cannot compound around a loop of follows, because
// [Service.Follow] refuses a follow that would close one.)
type ControlsPatch struct {
	ConnectionID    *uuid.UUID
	AllocationPct   *decimal.Decimal // in (0, 100]
	ScalingPct      *decimal.Decimal // in (0, 1000]
	MaxPositionPct  *decimal.Decimal // in (0, 100]
	CopyStopLossPct *decimal.Decimal // in (0, 100]
}

// FollowInput is what [Service.Follow] records.
type FollowInput struct {
	LeaderProfileID uuid.UUID
	AutoSync        bool // false by default
	Notifications   bool // true by default
	Controls        ControlsPatch
}

// bounds are the ranges of the controls: (0, max].
var bounds = []struct {
	param string
	max   decimal.Decimal
	get   func(*ControlsPatch) *decimal.Decimal
}{
	{"allocationPct", decimal.New(100, 0), func(c *ControlsPatch) *decimal.Decimal { return c.AllocationPct }},
	{"scalingPct", decimal.New(1000, 0), func(c *ControlsPatch) *decimal.Decimal { return c.ScalingPct }},
	{"maxPositionPct", decimal.New(100, 0), func(c *ControlsPatch) *decimal.Decimal { return c.MaxPositionPct }},
	{"copyStopLossPct", decimal.New(100, 0), func(c *ControlsPatch) *decimal.Decimal { return c.CopyStopLossPct }},
}

// check returns a *tradekit.ParamError for the first control out of its
// range, or with more than 4 decimal places.
func (c *ControlsPatch) check() error {
	for _, b := range bounds {
		v := b.get(c)
		if v != nil && (!v.IsPositive() || v.GreaterThan(b.max) || !v.Equal(v.Truncate(4))) {
			return &tradekit.ParamError{Param: b.param, Msg: fmt.Sprintf("must be above 0 and at most %s, with at most 4 decimals, not %s", b.max, v)}
		}
	}
	return nil
}

// apply sets the given controls on c.
func (p *ControlsPatch) apply(c *Controls) {
	if p.ConnectionID != nil {
		c.ConnectionID = p.ConnectionID
	}
	for _, set := range []struct {
		from *decimal.Decimal
		to   *decimal.Decimal
	}{{p.AllocationPct, &c.AllocationPct}, {p.ScalingPct, &c.ScalingPct}, {p.MaxPositionPct, &c.MaxPositionPct}, {p.CopyStopLossPct, &c.CopyStopLossPct}} {
		if set.from != nil {
			*set.to = *set.from
		}
	}
}

// Follow records that the user follows a published leader. Controls not
// given take [DefaultControls]. The error wraps [tradekit.ErrNotFound]
// for a leader that is not published, or a connection that is not the
// user's; [tradekit.ErrConflict] for following oneself, a leader the user
// follows already, a follow that would close a loop, or auto-sync without
// an active connection; and [tradekit.ErrInvalid] for a control out of
// range.
//
// A loop is a cycle of live follows (not unfollowed, of published
// profiles, with auto-sync on or off) from the leader back to the user,
// directly or through a chain: copies would multiply around it. Its error
// names the chain by the leaders' slugs, as in
//
//	following "alice" would close a loop: carol → alice → bob → carol; copies would multiply around it
//
// The check and the insert are one transaction that follow creations take
// in turn (on PostgreSQL under an advisory lock; SQLite serialises
// writers), so two follows that would close a loop together cannot both
// pass.
func (s *Service) Follow(ctx context.Context, userID uuid.UUID, in FollowInput) (Follow, error) {
	if err := in.Controls.check(); err != nil {
		return Follow{}, err
	}
	var leader Profile
	err := s.db.NewSelect().Model(&leader).Where("id = ? AND unpublished_at IS NULL", in.LeaderProfileID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Follow{}, notFound("leader profile %s not found", in.LeaderProfileID)
	}
	if err != nil {
		return Follow{}, fmt.Errorf("copytrading: leader: %w", err)
	}
	if leader.UserID == userID {
		return Follow{}, conflict("you cannot follow yourself")
	}
	now := s.clock()
	f := Follow{ID: uuid.New(), UserID: userID, LeaderProfileID: leader.ID, AutoSync: in.AutoSync, Notifications: in.Notifications,
		Controls: DefaultControls(), FollowedAt: now, CopySince: now, UpdatedAt: now}
	in.Controls.apply(&f.Controls)
	if err := s.checkConnection(ctx, &f); err != nil {
		return Follow{}, err
	}
	err = s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := database.LockKey(ctx, tx, followLockID); err != nil {
			return fmt.Errorf("copytrading: lock the follows: %w", err)
		}
		exists, err := tx.NewSelect().Model((*Follow)(nil)).
			Where("user_id = ? AND leader_profile_id = ? AND unfollowed_at IS NULL", userID, leader.ID).Exists(ctx)
		if err != nil {
			return fmt.Errorf("copytrading: follows: %w", err)
		}
		if exists {
			return conflict("you follow %s already", tradekit.Quote(leader.Slug))
		}
		loop, err := followLoop(ctx, tx, userID, leader.UserID, leader.Slug)
		if err != nil {
			return err
		}
		if loop != nil {
			return conflict("following %s would close a loop: %s; copies would multiply around it",
				tradekit.Quote(leader.Slug), strings.Join(loop, " → "))
		}
		if _, err := tx.NewInsert().Model(&f).Exec(ctx); err != nil {
			if database.IsUniqueViolation(err) {
				return conflict("you follow %s already", tradekit.Quote(leader.Slug))
			}
			return fmt.Errorf("copytrading: follow: %w", err)
		}
		return nil
	})
	return f, err
}

// followLockID is the lock key ([database.LockKey]) that serialises follow
// creation, so that the loop check sees every follow committed before it
// ("follows" in ASCII).
const followLockID = 0x66_6f6c_6c6f_7773

// loopChunk is the most user ids one query of [followLoop] asks about.
const loopChunk = 500

// followEdge is a live follow as the loop check sees it: from the
// follower to the user of the leader profile, named by its slug.
type followEdge struct {
	From uuid.UUID `bun:"follower_id"`
	To   uuid.UUID `bun:"leader_id"`
	Slug string    `bun:"slug"`
}

// followLoop returns the loop that userID following leaderID (whose
// profile is leaderSlug) would close, as the slugs of its users from
// userID round to userID again, or nil if there is none. It searches the
// live follows breadth first from leaderID, one query per level of
// followers (in chunks of loopChunk ids) and visits each user once, so it
// ends after at most as many levels as there are users, and returns a
// shortest loop.
func followLoop(ctx context.Context, tx bun.IDB, userID, leaderID uuid.UUID, leaderSlug string) ([]string, error) {
	parent := map[uuid.UUID]uuid.UUID{leaderID: userID} // how the search reached each user
	slug := map[uuid.UUID]string{leaderID: leaderSlug}
	for frontier := []uuid.UUID{leaderID}; len(frontier) > 0; {
		var next []uuid.UUID
		for len(frontier) > 0 {
			chunk := frontier[:min(len(frontier), loopChunk)]
			frontier = frontier[len(chunk):]
			var edges []followEdge
			err := tx.NewSelect().TableExpr("follows AS f").
				ColumnExpr("f.user_id AS follower_id, lp.user_id AS leader_id, lp.slug").
				Join("JOIN leader_profiles AS lp ON lp.id = f.leader_profile_id").
				Where("f.unfollowed_at IS NULL AND lp.unpublished_at IS NULL").
				Where("f.user_id IN (?)", bun.In(chunk)).
				OrderExpr("f.followed_at, f.id").Scan(ctx, &edges)
			if err != nil {
				return nil, fmt.Errorf("copytrading: follows of the leader: %w", err)
			}
			for _, e := range edges {
				if _, seen := parent[e.To]; seen {
					continue
				}
				parent[e.To], slug[e.To] = e.From, e.Slug
				if e.To != userID {
					next = append(next, e.To)
					continue
				}
				// userID → leaderID → … → e.From → userID.
				loop := []string{slug[userID]}
				for u := e.From; u != userID; u = parent[u] {
					loop = append(loop, slug[u])
				}
				loop = append(loop, slug[userID])
				slices.Reverse(loop)
				return loop, nil
			}
		}
		frontier = next
	}
	return nil, nil
}

// checkConnection checks f's connection: the follower's own (else not
// found), and, with auto-sync on, active. With auto-sync on and no
// connection chosen, it chooses the follower's only active connection.
func (s *Service) checkConnection(ctx context.Context, f *Follow) error {
	st := connect.NewStore(s.db)
	if f.ConnectionID != nil {
		c, err := st.Connection(ctx, f.UserID, *f.ConnectionID)
		if err != nil {
			return err
		}
		if f.AutoSync && c.Status != connect.Active {
			return conflict("auto-sync needs an active connection, and connection %s is %s", c.ID, c.Status)
		}
		return nil
	}
	if !f.AutoSync {
		return nil
	}
	list, err := st.Connections(ctx, f.UserID)
	if err != nil {
		return err
	}
	var active []connect.Connection
	for _, c := range list {
		if c.Status == connect.Active {
			active = append(active, c)
		}
	}
	switch len(active) {
	case 0:
		return conflict("auto-sync needs an active broker connection to trade through; connect a broker first")
	case 1:
		f.ConnectionID = &active[0].ID
		return nil
	}
	return &tradekit.ParamError{Param: "connectionId", Msg: fmt.Sprintf("you have %d active connections: say which the copies go through", len(active))}
}

// FollowView is a follow with its leader's slug and name.
type FollowView struct {
	Follow
	LeaderSlug        string `bun:"leader_slug"`
	LeaderDisplayName string `bun:"leader_display_name"`
}

// Following returns the user's live follows, oldest first.
func (s *Service) Following(ctx context.Context, userID uuid.UUID) ([]FollowView, error) {
	out := []FollowView{}
	err := s.db.NewSelect().TableExpr("follows AS f").ColumnExpr("f.*").
		ColumnExpr("lp.slug AS leader_slug, lp.display_name AS leader_display_name").
		Join("JOIN leader_profiles AS lp ON lp.id = f.leader_profile_id").
		Where("f.user_id = ? AND f.unfollowed_at IS NULL", userID).OrderExpr("f.followed_at, f.id").Scan(ctx, &out)
	if err != nil {
		return nil, fmt.Errorf("copytrading: following: %w", err)
	}
	return out, nil
}

// follow returns the user's live follow id, for update in tx. The error
// wraps [tradekit.ErrNotFound] when there is none.
func follow(ctx context.Context, tx bun.IDB, userID, id uuid.UUID) (Follow, error) {
	var f Follow
	err := tx.NewSelect().Model(&f).Where("id = ? AND user_id = ? AND unfollowed_at IS NULL", id, userID).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return Follow{}, notFound("follow %s not found", id)
	}
	if err != nil {
		return Follow{}, fmt.Errorf("copytrading: follow %s: %w", id, err)
	}
	return f, nil
}

// Unfollow ends the user's follow id. The error wraps
// [tradekit.ErrNotFound] for a follow that is not the user's or has ended.
func (s *Service) Unfollow(ctx context.Context, userID, id uuid.UUID) (Follow, error) {
	f, err := follow(ctx, s.db, userID, id)
	if err != nil {
		return Follow{}, err
	}
	now := s.clock()
	f.UnfollowedAt, f.AutoSync, f.UpdatedAt = &now, false, now
	res, err := s.db.NewUpdate().Model(&f).Column("unfollowed_at", "auto_sync", "updated_at").WherePK().Where("unfollowed_at IS NULL").Exec(ctx)
	if err != nil {
		return Follow{}, fmt.Errorf("copytrading: unfollow: %w", err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return Follow{}, notFound("follow %s not found", id)
	}
	return f, nil
}

// FollowPatch changes a follow: nil fields keep their values.
type FollowPatch struct {
	AutoSync      *bool
	Notifications *bool
	Controls      ControlsPatch
}

// UpdateFollow changes the user's follow id. Turning auto-sync on needs
// an active connection, chosen as [Service.Follow] does, clears the
// reason it was last stopped, and copies the leader's fills from then on
// only. Its errors are Follow's, and [tradekit.ErrConflict] for turning
// auto-sync on in a follow of a leader who unpublished their profile.
func (s *Service) UpdateFollow(ctx context.Context, userID, id uuid.UUID, p FollowPatch) (Follow, error) {
	if err := p.Controls.check(); err != nil {
		return Follow{}, err
	}
	f, err := follow(ctx, s.db, userID, id)
	if err != nil {
		return Follow{}, err
	}
	if p.AutoSync != nil && *p.AutoSync {
		if err := s.checkPublished(ctx, f.LeaderProfileID); err != nil {
			return Follow{}, err
		}
	}
	now := s.clock()
	if p.AutoSync != nil {
		if *p.AutoSync && !f.AutoSync {
			// Copying resumes from now, not from the fills it missed.
			f.StoppedReason, f.CopySince = "", now
		}
		f.AutoSync = *p.AutoSync
	}
	if p.Notifications != nil {
		f.Notifications = *p.Notifications
	}
	p.Controls.apply(&f.Controls)
	if err := s.checkConnection(ctx, &f); err != nil {
		return Follow{}, err
	}
	f.UpdatedAt = now
	q := s.db.NewUpdate().Model(&f).Column("auto_sync", "notifications", "connection_id", "allocation_pct", "scaling_pct",
		"max_position_pct", "copy_stop_loss_pct", "stopped_reason", "copy_since", "updated_at").WherePK().Where("unfollowed_at IS NULL")
	if f.AutoSync {
		// Not if the leader unpublished since checkPublished: Unpublish
		// would have stopped the follow a moment before.
		q = q.Where("leader_profile_id IN (SELECT id FROM leader_profiles WHERE unpublished_at IS NULL)")
	}
	res, err := q.Exec(ctx)
	if err != nil {
		return Follow{}, fmt.Errorf("copytrading: update follow: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 && f.AutoSync {
		if err := s.checkPublished(ctx, f.LeaderProfileID); err != nil {
			return Follow{}, err
		}
		return Follow{}, notFound("follow %s not found", id)
	}
	return f, nil
}

// checkPublished returns an error wrapping [tradekit.ErrConflict] when
// the leader profile id is unpublished.
func (s *Service) checkPublished(ctx context.Context, id uuid.UUID) error {
	var p Profile
	err := s.db.NewSelect().Model(&p).Column("slug", "unpublished_at").Where("id = ?", id).Scan(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: leader profile %s: %w", id, err)
	}
	if p.UnpublishedAt != nil {
		return conflict("%s unpublished their leader profile: there is nothing to copy; follow them again if they publish anew",
			tradekit.Quote(p.Slug))
	}
	return nil
}

// notify stores a notification for the user through package alerts,
// which owns the notifications ([alerts.Notifications.Insert]).
func notify(ctx context.Context, db bun.IDB, userID uuid.UUID, kind, message string, at time.Time, data map[string]any) error {
	return alerts.NewNotifications(db).Insert(ctx, userID, kind, message, at, data)
}

// Notifications returns a page of the user's notifications, newest first,
// and how many they have; with unread, only those not read.
func (s *Service) Notifications(ctx context.Context, userID uuid.UUID, unread bool, page, limit int) ([]Notification, int, error) {
	return s.NotificationsOfKinds(ctx, userID, nil, unread, page, limit)
}

// NotificationsOfKinds is [Service.Notifications] of the given kinds only
// (nil: every kind), for a page that shows one subject's notifications:
// [Kinds] for copy trading, the alerts package's kinds for alerts. It
// reads them through package alerts ([alerts.Notifications.List]).
func (s *Service) NotificationsOfKinds(ctx context.Context, userID uuid.UUID, kinds []string, unread bool, page, limit int) ([]Notification, int, error) {
	return alerts.NewNotifications(s.db).List(ctx, userID, kinds, unread, page, limit)
}

// MarkRead marks the user's notification id read, once: marking it again
// keeps the first time. The error wraps [tradekit.ErrNotFound] for a
// notification that is not the user's ([alerts.Notifications.MarkRead]).
func (s *Service) MarkRead(ctx context.Context, userID, id uuid.UUID) (Notification, error) {
	return alerts.NewNotifications(s.db).MarkRead(ctx, userID, id, s.clock())
}
