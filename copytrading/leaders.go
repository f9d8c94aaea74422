package copytrading

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/internal/database"
	"github.com/tradekit/tradekit/marketdata"
)

// Config configures a [Service]; the zero value is usable, without
// auto-sync.
type Config struct {
	// Orders places the mirrored orders of auto-sync; nil turns the copy
	// engine off.
	Orders OrderPlacer
	// CopyInterval is how often [Service.Run] looks for leader fills when
	// nothing woke it; DefaultCopyInterval when zero.
	CopyInterval time.Duration
	Now          func() time.Time // time.Now when nil
	Logger       *slog.Logger     // slog.Default() when nil
	// CopyPlaced, when set, is called each time auto-sync places a copy
	// order, with the copy lag: the time from the leader's fill to the
	// copy's placement, on the Now clock. It is called on the copy
	// engine's goroutine, so it must be quick.
	CopyPlaced func(lag time.Duration)
}

// Service runs copy trading on a database. It is safe for concurrent use,
// and several instances on one database behave as one.
type Service struct {
	db        *bun.DB
	orders    OrderPlacer
	copyEvery time.Duration
	now       func() time.Time
	log       *slog.Logger
	wake      chan struct{} // see [Service.Wake]
	placed    func(lag time.Duration)
}

// New returns a Service on db, which must be migrated.
func New(db *bun.DB, cfg Config) *Service {
	s := &Service{db: db, orders: cfg.Orders, copyEvery: cfg.CopyInterval, now: cfg.Now, log: cfg.Logger,
		wake: make(chan struct{}, 1), placed: cfg.CopyPlaced}
	if s.copyEvery <= 0 {
		s.copyEvery = DefaultCopyInterval
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	return s
}

// clock returns the current time as stored: UTC, to the microsecond.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// The limits of a profile's text.
const (
	MaxDisplayName = 80
	MaxBio         = 1000
)

// slugPattern is a slug: 3–40 characters of a–z, 0–9 and "-".
var slugPattern = regexp.MustCompile(`^[a-z0-9-]{3,40}$`)

// PublishInput is what [Service.Publish] publishes.
type PublishInput struct {
	PortfolioID uuid.UUID
	DisplayName string // 1–80 characters
	Slug        string // 3–40 of a–z, 0–9 and "-", unique among published profiles
	Bio         string // at most 1,000 characters
}

// Publish publishes the user's portfolio as their leader profile and
// computes its statistics. The error wraps [tradekit.ErrInvalid] (a
// *tradekit.ParamError) for a bad slug, name or bio,
// [tradekit.ErrNotFound] for a portfolio that is not the user's, and
// [tradekit.ErrConflict] for a slug another published profile has or a
// user already published.
func (s *Service) Publish(ctx context.Context, userID uuid.UUID, in PublishInput) (Profile, error) {
	in.DisplayName = strings.TrimSpace(in.DisplayName)
	switch n := utf8.RuneCountInString(in.DisplayName); {
	case !slugPattern.MatchString(in.Slug):
		return Profile{}, &tradekit.ParamError{Param: "slug",
			Msg: "must be 3 to 40 characters of lowercase letters, digits and hyphens, not " + tradekit.Quote(in.Slug)}
	case n == 0:
		return Profile{}, &tradekit.ParamError{Param: "displayName", Msg: "is required"}
	case n > MaxDisplayName:
		return Profile{}, &tradekit.ParamError{Param: "displayName", Msg: fmt.Sprintf("must be at most %d characters, not %d", MaxDisplayName, n)}
	case utf8.RuneCountInString(in.Bio) > MaxBio:
		return Profile{}, &tradekit.ParamError{Param: "bio", Msg: fmt.Sprintf("must be at most %d characters", MaxBio)}
	}
	if _, err := connect.NewStore(s.db).Portfolio(ctx, userID, in.PortfolioID); err != nil {
		return Profile{}, err
	}
	p := Profile{ID: uuid.New(), UserID: userID, PortfolioID: in.PortfolioID, Slug: in.Slug, DisplayName: in.DisplayName,
		Bio: in.Bio, PublishedAt: s.clock(), MonthlyReturns: "[]"}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var live []Profile
		err := tx.NewSelect().Model(&live).Where("unpublished_at IS NULL AND (user_id = ? OR slug = ?)", userID, in.Slug).Scan(ctx)
		if err != nil {
			return fmt.Errorf("copytrading: published profiles: %w", err)
		}
		for _, l := range live {
			if l.UserID == userID {
				return conflict("you have published the profile %s already; unpublish it first", tradekit.Quote(l.Slug))
			}
			return conflict("the slug %s is taken", tradekit.Quote(in.Slug))
		}
		if _, err := tx.NewInsert().Model(&p).Exec(ctx); err != nil {
			return fmt.Errorf("copytrading: publish: %w", err)
		}
		return nil
	})
	if err != nil {
		if database.IsUniqueViolation(err) {
			return Profile{}, conflict("the slug %s is taken", tradekit.Quote(in.Slug))
		}
		return Profile{}, err
	}
	return p, s.refresh(ctx, &p)
}

// conflict returns an error wrapping [tradekit.ErrConflict] with a
// message for users.
func conflict(format string, args ...any) error {
	return fmt.Errorf("copytrading: %w", tradekit.Errorf(tradekit.ErrConflict, format, args...))
}

// notFound returns an error wrapping [tradekit.ErrNotFound] with a
// message for users.
func notFound(format string, args ...any) error {
	return fmt.Errorf("copytrading: %w", tradekit.Errorf(tradekit.ErrNotFound, format, args...))
}

// StoppedUnpublished is the StoppedReason of the follows of a leader who
// unpublished their profile.
const StoppedUnpublished = "the leader unpublished the profile"

// Unpublish takes the user's profile off the lists. Its follows end as
// follows: whatever their auto-sync, each stops (auto-sync off,
// StoppedReason [StoppedUnpublished]; the copy engine takes up no more
// of the leader's fills for it, copies or notifications), stays listed
// for its follower to see and unfollow, and cannot be turned on again
// ([Service.UpdateFollow]); every follower is notified. A profile
// published again is a new profile, followed anew. The error wraps
// [tradekit.ErrNotFound] when the user has no published profile.
func (s *Service) Unpublish(ctx context.Context, userID uuid.UUID) (Profile, error) {
	var p Profile
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		err := tx.NewSelect().Model(&p).Where("user_id = ? AND unpublished_at IS NULL", userID).Scan(ctx)
		if errors.Is(err, sql.ErrNoRows) {
			return notFound("you have no published leader profile")
		}
		if err != nil {
			return fmt.Errorf("copytrading: profile: %w", err)
		}
		now := s.clock()
		p.UnpublishedAt = &now
		if _, err := tx.NewUpdate().Model(&p).Column("unpublished_at").WherePK().Exec(ctx); err != nil {
			return fmt.Errorf("copytrading: unpublish: %w", err)
		}
		var follows []Follow
		if err := tx.NewSelect().Model(&follows).Where("leader_profile_id = ? AND unfollowed_at IS NULL", p.ID).Scan(ctx); err != nil {
			return fmt.Errorf("copytrading: followers: %w", err)
		}
		_, err = tx.NewUpdate().Model((*Follow)(nil)).
			Set("auto_sync = ?, stopped_reason = ?, updated_at = ?", false, StoppedUnpublished, now).
			Where("leader_profile_id = ? AND unfollowed_at IS NULL", p.ID).Exec(ctx)
		if err != nil {
			return fmt.Errorf("copytrading: stop the follows: %w", err)
		}
		for _, f := range follows {
			msg := fmt.Sprintf("%s (%s) unpublished their leader profile; your follow has stopped: no more copies or trade notifications from it",
				p.DisplayName, p.Slug)
			if err := notify(ctx, tx, f.UserID, KindLeaderUnpublished, msg, now,
				map[string]any{"leaderProfileId": p.ID.String(), "followId": f.ID.String()}); err != nil {
				return err
			}
		}
		return nil
	})
	return p, err
}

// Leader is a published profile with what the lists show beside it.
type Leader struct {
	Profile
	Followers int    `bun:"followers"` // active follows
	Provider  string `bun:"-"`         // the provider of the portfolio's connection
	// Verified reports that the history comes from a broker connection:
	// every provider's (the paper broker's of the demo leaders included)
	// but [DemoProvider]'s.
	Verified bool `bun:"-"`
}

// Holding is a position's share of a leader's equity.
type Holding struct {
	Symbol        string
	AllocationPct decimal.Decimal // market value / equity × 100, rounded to 2 places
}

// LeaderDetail is a leader with their figures in full.
type LeaderDetail struct {
	Leader
	Monthly     []Month
	TopHoldings []Holding // by allocation, largest first, at most TopHoldings
}

// TopHoldings is the most holdings a leader's detail shows.
const TopHoldings = 10

// The orders of the leaders list.
const (
	SortTotalReturn = "totalReturn"
	SortSharpeRatio = "sharpeRatio"
	SortFollowers   = "followers"
)

// SortOrders returns the sortBy values the leaders list takes.
func SortOrders() []string { return []string{SortTotalReturn, SortSharpeRatio, SortFollowers} }

// LeaderFilter selects and orders the leaders list.
type LeaderFilter struct {
	SortBy    string   // one of SortOrders; SortTotalReturn when ""
	MinReturn *float64 // the least totalReturn, a fraction; nil for any
	Page      int      // from 1
	Limit     int      // leaders per page
}

// Leaders returns a page of the published profiles, best first by
// f.SortBy, then by publication (oldest first) and id, so that ties keep
// their order from page to page; and how many f selects. It refreshes
// first the statistics of profiles whose portfolio synced since they were
// computed.
func (s *Service) Leaders(ctx context.Context, f LeaderFilter) ([]Leader, int, error) {
	if err := s.refreshStale(ctx); err != nil {
		return nil, 0, err
	}
	order := "lp.total_return DESC"
	switch f.SortBy {
	case "", SortTotalReturn:
	case SortSharpeRatio:
		order = "lp.sharpe_ratio IS NULL, lp.sharpe_ratio DESC" // those without one last, on both databases
	case SortFollowers:
		order = "followers DESC"
	default:
		return nil, 0, &tradekit.ParamError{Param: "sortBy", Msg: fmt.Sprintf("must be one of %v, not %s", SortOrders(), tradekit.Quote(f.SortBy))}
	}
	q := s.leaders().Where("lp.unpublished_at IS NULL")
	if f.MinReturn != nil {
		q = q.Where("lp.total_return >= ?", *f.MinReturn)
	}
	var out []Leader
	if err := q.OrderExpr(order).OrderExpr("lp.published_at, lp.id").Limit(f.Limit).Offset((f.Page-1)*f.Limit).Scan(ctx, &out); err != nil {
		return nil, 0, fmt.Errorf("copytrading: leaders: %w", err)
	}
	if err := s.providers(ctx, out); err != nil {
		return nil, 0, err
	}
	cq := s.db.NewSelect().TableExpr("leader_profiles AS lp").Where("lp.unpublished_at IS NULL")
	if f.MinReturn != nil {
		cq = cq.Where("lp.total_return >= ?", *f.MinReturn)
	}
	total, err := cq.Count(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("copytrading: count leaders: %w", err)
	}
	for i := range out {
		out[i].Verified = out[i].Provider != DemoProvider
	}
	return out, total, nil
}

// leaders selects profiles with their active follows counted; their
// providers are package connect's to tell (see [Service.providers]).
func (s *Service) leaders() *bun.SelectQuery {
	return s.db.NewSelect().TableExpr("leader_profiles AS lp").ColumnExpr("lp.*").
		ColumnExpr("(SELECT count(*) FROM follows AS f WHERE f.leader_profile_id = lp.id AND f.unfollowed_at IS NULL) AS followers")
}

// leader returns the published profile with the slug, with its provider.
// The error wraps [tradekit.ErrNotFound] when none has it.
func (s *Service) leader(ctx context.Context, slug string) (Leader, error) {
	one := make([]Leader, 1)
	err := s.leaders().Where("lp.slug = ? AND lp.unpublished_at IS NULL", slug).Scan(ctx, &one[0])
	if errors.Is(err, sql.ErrNoRows) {
		return Leader{}, notFound("no published leader has the slug %s", tradekit.Quote(slug))
	}
	if err != nil {
		return Leader{}, fmt.Errorf("copytrading: leader %s: %w", slug, err)
	}
	if err := s.providers(ctx, one); err != nil {
		return Leader{}, err
	}
	return one[0], nil
}

// providers sets the Provider of each leader: that of its portfolio's
// connection, "" when the portfolio is gone.
func (s *Service) providers(ctx context.Context, ls []Leader) error {
	ids := make([]uuid.UUID, len(ls))
	for i, l := range ls {
		ids[i] = l.PortfolioID
	}
	by, err := connect.NewStore(s.db).Providers(ctx, ids)
	if err != nil {
		return err
	}
	for i := range ls {
		ls[i].Provider = by[ls[i].PortfolioID]
	}
	return nil
}

// LeaderBySlug returns the published profile with the slug, its figures
// refreshed if its portfolio synced since they were computed. The error
// wraps [tradekit.ErrNotFound] when none has it.
func (s *Service) LeaderBySlug(ctx context.Context, slug string) (LeaderDetail, error) {
	l, err := s.leader(ctx, slug)
	if err != nil {
		return LeaderDetail{}, err
	}
	pf, err := connect.NewStore(s.db).Portfolio(ctx, l.UserID, l.PortfolioID)
	if err != nil {
		return LeaderDetail{}, err
	}
	if l.StatsAt == nil || l.StatsAt.Before(pf.UpdatedAt) {
		if err := s.refresh(ctx, &l.Profile); err != nil {
			return LeaderDetail{}, err
		}
	}
	l.Verified = l.Provider != DemoProvider
	d := LeaderDetail{Leader: l}
	if err := json.Unmarshal([]byte(l.MonthlyReturns), &d.Monthly); err != nil {
		return LeaderDetail{}, fmt.Errorf("copytrading: monthly returns of %s: %w", slug, err)
	}
	valued, equity, err := connect.Value(ctx, marketdata.NewStore(s.db), pf)
	if err != nil {
		return LeaderDetail{}, err
	}
	d.TopHoldings = []Holding{}
	if equity.IsPositive() {
		for _, v := range valued {
			d.TopHoldings = append(d.TopHoldings, Holding{Symbol: v.Symbol, AllocationPct: v.MarketValue.Shift(2).DivRound(equity, 2)})
		}
	}
	slices.SortStableFunc(d.TopHoldings, func(a, b Holding) int {
		if c := b.AllocationPct.Cmp(a.AllocationPct); c != 0 {
			return c
		}
		return strings.Compare(a.Symbol, b.Symbol)
	})
	if len(d.TopHoldings) > TopHoldings {
		d.TopHoldings = d.TopHoldings[:TopHoldings]
	}
	return d, nil
}

// Transaction is a fill of a leader's portfolio, as its broker reported it.
type Transaction struct {
	ID         string // the broker's id
	Symbol     string
	Side       string
	Quantity   decimal.Decimal
	Price      decimal.Decimal
	ExecutedAt time.Time
	Verified   bool // reported by a broker, not simulated
}

// Transactions returns the fills of the published profile with the slug,
// newest first. The error wraps [tradekit.ErrNotFound] when no published
// profile has the slug.
func (s *Service) Transactions(ctx context.Context, slug string) ([]Transaction, error) {
	p, err := s.leader(ctx, slug)
	if err != nil {
		return nil, err
	}
	fills, err := connect.NewStore(s.db).Fills(ctx, p.PortfolioID)
	if err != nil {
		return nil, err
	}
	out := make([]Transaction, len(fills))
	for i, f := range fills {
		out[i] = Transaction{ID: f.BrokerID, Symbol: f.Symbol, Side: f.Side, Quantity: f.Quantity, Price: f.Price, ExecutedAt: f.FilledAt,
			Verified: p.Provider != DemoProvider}
	}
	return out, nil
}

// refreshStale refreshes the statistics of every published profile whose
// portfolio synced after they were computed.
func (s *Service) refreshStale(ctx context.Context) error {
	var live []Profile
	// What refresh needs: it writes the statistics' columns only.
	err := s.db.NewSelect().Model(&live).Column("id", "portfolio_id", "slug", "stats_at").
		Where("unpublished_at IS NULL").Scan(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: stale statistics: %w", err)
	}
	ids := make([]uuid.UUID, len(live))
	for i, p := range live {
		ids[i] = p.PortfolioID
	}
	updated, err := connect.NewStore(s.db).UpdatedAt(ctx, ids)
	if err != nil {
		return err
	}
	for i := range live {
		p := &live[i]
		at, ok := updated[p.PortfolioID]
		if p.StatsAt != nil && (!ok || !p.StatsAt.Before(at)) {
			continue
		}
		if err := s.refresh(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// refresh computes p's statistics from its portfolio's daily equity and
// stores them.
func (s *Service) refresh(ctx context.Context, p *Profile) error {
	points, err := connect.NewStore(s.db).HistoryByID(ctx, p.PortfolioID)
	if err != nil {
		return fmt.Errorf("copytrading: history of %s: %w", p.Slug, err)
	}
	days := make([]Day, len(points))
	for i, e := range points {
		days[i] = Day{Date: calendar.Date(e.Date), Equity: e.Equity, Flow: e.Flow}
	}
	st := Compute(days)
	monthly, err := json.Marshal(st.MonthlyReturns)
	if err != nil {
		return fmt.Errorf("copytrading: encode monthly returns: %w", err)
	}
	now := s.clock()
	p.TotalReturn, p.SharpeRatio, p.MaxDrawdown = st.TotalReturn, existing(st.SharpeRatio), existing(st.MaxDrawdown)
	p.MonthlyReturns, p.StatsAt = string(monthly), &now
	_, err = s.db.NewUpdate().Model(p).Column("total_return", "sharpe_ratio", "max_drawdown", "monthly_returns", "stats_at").WherePK().Exec(ctx)
	if err != nil {
		return fmt.Errorf("copytrading: store statistics of %s: %w", p.Slug, err)
	}
	return nil
}

// existing returns &f, or nil when f is NaN: a figure that does not exist.
func existing(f float64) *float64 {
	if math.IsNaN(f) {
		return nil
	}
	return &f
}
