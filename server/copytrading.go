package server

import (
	"encoding/json"
	"math"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/internal/jsonnum"
)

// fraction writes a float64 figure as a JSON number, with at most 15
// significant digits ([jsonnum.AppendFloat]), and 0 for NaN or infinities,
// which JSON cannot hold.
type fraction float64

// MarshalJSON implements [json.Marshaler].
func (f fraction) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("0"), nil
	}
	return jsonnum.AppendFloat(nil, float64(f)), nil
}

// leaderJSON is a leader as the leaders list shows one.
type leaderJSON struct {
	ID          string    `json:"id"`
	Slug        string    `json:"slug"`
	DisplayName string    `json:"displayName"`
	Bio         string    `json:"bio"`
	TotalReturn fraction  `json:"totalReturn"`
	SharpeRatio *fraction `json:"sharpeRatio"` // null while it does not exist
	Followers   int       `json:"followers"`
	Verified    bool      `json:"verified"`
	PublishedAt timestamp `json:"publishedAt"`
}

func newLeaderJSON(l copytrading.Leader) leaderJSON {
	return leaderJSON{ID: l.ID.String(), Slug: l.Slug, DisplayName: l.DisplayName, Bio: l.Bio, TotalReturn: fraction(l.TotalReturn),
		SharpeRatio: (*fraction)(l.SharpeRatio), Followers: l.Followers, Verified: l.Verified, PublishedAt: timestamp(l.PublishedAt)}
}

// leaderListParams are the parameters of GET /api/v1/copy-trading/leaders.
type leaderListParams struct {
	SortBy string `query:"sortBy" default:"totalReturn" validate:"oneof=totalReturn sharpeRatio followers"`
	pageParams
	MinReturn *float64 `query:"minReturn" validate:"omitnil,gte=-1,lte=1000000"` // a fraction: 0.1 is 10 %
}

// handleLeaderList serves GET /api/v1/copy-trading/leaders.
func (s *Server) handleLeaderList(w http.ResponseWriter, req bunrouter.Request, p *leaderListParams) error {
	f := copytrading.LeaderFilter{SortBy: p.SortBy, Page: p.Page, Limit: p.Limit, MinReturn: p.MinReturn}
	list, total, err := s.copy.Leaders(req.Context(), f)
	if err != nil {
		return err
	}
	out := make([]leaderJSON, len(list))
	for i, l := range list {
		out[i] = newLeaderJSON(l)
	}
	s.writeJSON(w, http.StatusOK, listJSON{Data: out, Meta: metaJSON{Total: total, Page: f.Page, Limit: f.Limit}})
	return nil
}

// handleLeaderGet serves GET /api/v1/copy-trading/leaders/:slug.
func (s *Server) handleLeaderGet(w http.ResponseWriter, req bunrouter.Request, p *slugParams) error {
	d, err := s.copy.LeaderBySlug(req.Context(), p.Slug)
	if err != nil {
		return err
	}
	type holdingJSON struct {
		Symbol        string `json:"symbol"`
		AllocationPct number `json:"allocationPct"`
	}
	type monthJSON struct {
		Month  string   `json:"month"`
		Return fraction `json:"return"`
	}
	l := newLeaderJSON(d.Leader)
	out := struct {
		ID             string        `json:"id"`
		Slug           string        `json:"slug"`
		DisplayName    string        `json:"displayName"`
		Bio            string        `json:"bio"`
		TotalReturn    fraction      `json:"totalReturn"`
		SharpeRatio    *fraction     `json:"sharpeRatio"`
		MaxDrawdown    *fraction     `json:"maxDrawdown"`
		Followers      int           `json:"followers"`
		Verified       bool          `json:"verified"`
		TopHoldings    []holdingJSON `json:"topHoldings"`
		MonthlyReturns []monthJSON   `json:"monthlyReturns"`
		PublishedAt    timestamp     `json:"publishedAt"`
	}{ID: l.ID, Slug: l.Slug, DisplayName: l.DisplayName, Bio: l.Bio, TotalReturn: l.TotalReturn, SharpeRatio: l.SharpeRatio,
		MaxDrawdown: (*fraction)(d.MaxDrawdown), Followers: l.Followers, Verified: l.Verified, PublishedAt: l.PublishedAt,
		TopHoldings: make([]holdingJSON, len(d.TopHoldings)), MonthlyReturns: make([]monthJSON, len(d.Monthly))}
	for i, h := range d.TopHoldings {
		out.TopHoldings[i] = holdingJSON{Symbol: h.Symbol, AllocationPct: number(h.AllocationPct)}
	}
	for i, m := range d.Monthly {
		out.MonthlyReturns[i] = monthJSON{Month: m.Month, Return: fraction(m.Return)}
	}
	return s.writeData(w, out)
}

// handleLeaderTransactions serves GET
// /api/v1/copy-trading/leaders/:slug/transactions: the leader's fills,
// newest first.
func (s *Server) handleLeaderTransactions(w http.ResponseWriter, req bunrouter.Request, p *slugParams) error {
	list, err := s.copy.Transactions(req.Context(), p.Slug)
	if err != nil {
		return err
	}
	type transactionJSON struct {
		ID         string    `json:"id"`
		Symbol     string    `json:"symbol"`
		Side       string    `json:"side"`
		Quantity   number    `json:"quantity"`
		Price      number    `json:"price"`
		ExecutedAt timestamp `json:"executedAt"`
		Verified   bool      `json:"verified"`
	}
	out := make([]transactionJSON, len(list))
	for i, t := range list {
		out[i] = transactionJSON{ID: t.ID, Symbol: t.Symbol, Side: t.Side, Quantity: number(t.Quantity), Price: number(t.Price),
			ExecutedAt: timestamp(t.ExecutedAt), Verified: t.Verified}
	}
	return s.writeData(w, out)
}

// followJSON is a follow as the API shows it: the spec's fields, then the
// copy controls of the CONTRACT's trading additions.
type followJSON struct {
	ID              string     `json:"id"`
	LeaderProfileID string     `json:"leaderProfileId"`
	AutoSync        bool       `json:"autoSync"`
	Notifications   bool       `json:"notifications"`
	FollowedAt      timestamp  `json:"followedAt"`
	LeaderSlug      *string    `json:"leaderSlug,omitempty"`
	LeaderName      *string    `json:"leaderDisplayName,omitempty"`
	ConnectionID    *string    `json:"connectionId"`
	AllocationPct   number     `json:"allocationPct"`
	ScalingPct      number     `json:"scalingPct"`
	MaxPositionPct  number     `json:"maxPositionPct"`
	CopyStopLossPct number     `json:"copyStopLossPct"`
	StoppedReason   *string    `json:"stoppedReason"`
	UpdatedAt       *timestamp `json:"updatedAt,omitempty"`
}

func newFollowJSON(f copytrading.Follow) followJSON {
	out := followJSON{ID: f.ID.String(), LeaderProfileID: f.LeaderProfileID.String(), AutoSync: f.AutoSync, Notifications: f.Notifications,
		FollowedAt: timestamp(f.FollowedAt), AllocationPct: number(f.AllocationPct), ScalingPct: number(f.ScalingPct),
		MaxPositionPct: number(f.MaxPositionPct), CopyStopLossPct: number(f.CopyStopLossPct), StoppedReason: nonEmpty(f.StoppedReason)}
	if f.ConnectionID != nil {
		id := f.ConnectionID.String()
		out.ConnectionID = &id
	}
	return out
}

// followControls are the copy controls of a follow's parameters; package
// copytrading checks them.
type followControls struct {
	ConnectionID    *uuid.UUID       `query:"connectionId"`
	AllocationPct   *decimal.Decimal `query:"allocationPct"`
	ScalingPct      *decimal.Decimal `query:"scalingPct"`
	MaxPositionPct  *decimal.Decimal `query:"maxPositionPct"`
	CopyStopLossPct *decimal.Decimal `query:"copyStopLossPct"`
}

// patch returns the controls given.
func (c followControls) patch() copytrading.ControlsPatch {
	return copytrading.ControlsPatch{ConnectionID: c.ConnectionID, AllocationPct: c.AllocationPct, ScalingPct: c.ScalingPct,
		MaxPositionPct: c.MaxPositionPct, CopyStopLossPct: c.CopyStopLossPct}
}

// followCreateParams are the parameters of POST /api/v1/copy-trading/follow.
type followCreateParams struct {
	LeaderProfileID uuid.UUID `query:"leaderProfileId" validate:"required"`
	AutoSync        bool      `query:"autoSync" default:"false"`
	Notifications   bool      `query:"notifications" default:"true"`
	followControls
}

// handleFollowCreate serves POST /api/v1/copy-trading/follow.
func (s *Server) handleFollowCreate(w http.ResponseWriter, req bunrouter.Request, p *followCreateParams) error {
	in := copytrading.FollowInput{LeaderProfileID: p.LeaderProfileID, AutoSync: p.AutoSync, Notifications: p.Notifications,
		Controls: p.patch()}
	f, err := s.copy.Follow(req.Context(), principal(req.Context()).UserID, in)
	if err != nil {
		return err
	}
	return s.writeData(w, newFollowJSON(f))
}

// handleFollowingList serves GET /api/v1/copy-trading/following.
func (s *Server) handleFollowingList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.copy.Following(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]followJSON, len(list))
	for i, f := range list {
		out[i] = newFollowJSON(f.Follow)
		out[i].LeaderSlug, out[i].LeaderName = &list[i].LeaderSlug, &list[i].LeaderDisplayName
	}
	return s.writeData(w, out)
}

// handleFollowDelete serves DELETE /api/v1/copy-trading/follow/:id.
func (s *Server) handleFollowDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	f, err := s.copy.Unfollow(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": f.ID.String(), "status": "unfollowed"})
}

// followSyncParams are the parameters of PATCH
// /api/v1/copy-trading/follow/:id/sync.
type followSyncParams struct {
	ID       uuid.UUID `path:"id"`
	AutoSync *bool     `query:"autoSync" validate:"required"`
}

// handleFollowSync serves PATCH /api/v1/copy-trading/follow/:id/sync.
func (s *Server) handleFollowSync(w http.ResponseWriter, req bunrouter.Request, p *followSyncParams) error {
	f, err := s.copy.UpdateFollow(req.Context(), principal(req.Context()).UserID, p.ID, copytrading.FollowPatch{AutoSync: p.AutoSync})
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": f.ID.String(), "autoSync": f.AutoSync, "updatedAt": timestamp(f.UpdatedAt)})
}

// followPatchParams are the parameters of PATCH
// /api/v1/copy-trading/follow/:id: only those given change.
type followPatchParams struct {
	ID            uuid.UUID `path:"id"`
	AutoSync      *bool     `query:"autoSync"`
	Notifications *bool     `query:"notifications"`
	followControls
}

// handleFollowPatch serves PATCH /api/v1/copy-trading/follow/:id (beyond
// the spec): autoSync, notifications and the copy controls; only those
// given change.
func (s *Server) handleFollowPatch(w http.ResponseWriter, req bunrouter.Request, p *followPatchParams) error {
	f, err := s.copy.UpdateFollow(req.Context(), principal(req.Context()).UserID, p.ID,
		copytrading.FollowPatch{AutoSync: p.AutoSync, Notifications: p.Notifications, Controls: p.patch()})
	if err != nil {
		return err
	}
	out := newFollowJSON(f)
	at := timestamp(f.UpdatedAt)
	out.UpdatedAt = &at
	return s.writeData(w, out)
}

// publishParams are the parameters of POST /api/v1/copy-trading/publish;
// package copytrading checks them.
type publishParams struct {
	PortfolioID uuid.UUID `query:"portfolioId" validate:"required"`
	DisplayName string    `query:"displayName" validate:"required"`
	Slug        string    `query:"slug" validate:"required"`
	Bio         string    `query:"bio"`
}

// handlePublish serves POST /api/v1/copy-trading/publish.
func (s *Server) handlePublish(w http.ResponseWriter, req bunrouter.Request, in *publishParams) error {
	p, err := s.copy.Publish(req.Context(), principal(req.Context()).UserID, copytrading.PublishInput{
		PortfolioID: in.PortfolioID, DisplayName: in.DisplayName, Slug: in.Slug, Bio: in.Bio})
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": p.ID.String(), "slug": p.Slug, "displayName": p.DisplayName, "bio": p.Bio,
		"portfolioId": p.PortfolioID.String(), "publishedAt": timestamp(p.PublishedAt)})
}

// handleUnpublish serves DELETE /api/v1/copy-trading/publish.
func (s *Server) handleUnpublish(w http.ResponseWriter, req bunrouter.Request) error {
	if _, err := s.copy.Unpublish(req.Context(), principal(req.Context()).UserID); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"status": "unpublished"})
}

// handleStrategyList serves GET /api/v1/copy-trading/strategies.
func (s *Server) handleStrategyList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.copy.Strategies(req.Context())
	if err != nil {
		return err
	}
	type strategyJSON struct {
		ID          string    `json:"id"`
		Name        string    `json:"name"`
		Description string    `json:"description"`
		PublishedAt timestamp `json:"publishedAt"`
		AuthorSlug  *string   `json:"authorSlug"`
		TotalReturn *fraction `json:"totalReturn"`
		SharpeRatio *fraction `json:"sharpeRatio"`
	}
	out := make([]strategyJSON, len(list))
	for i, st := range list {
		out[i] = strategyJSON{ID: st.ID.String(), Name: st.Name, Description: st.Description, PublishedAt: timestamp(st.PublishedAt),
			AuthorSlug: st.AuthorSlug, TotalReturn: (*fraction)(st.TotalReturn), SharpeRatio: (*fraction)(st.SharpeRatio)}
	}
	return s.writeData(w, out)
}

// strategyCreateParams are the parameters of POST
// /api/v1/copy-trading/strategies; package copytrading checks them.
type strategyCreateParams struct {
	StrategyHash string `query:"strategyHash" validate:"required"`
	Name         string `query:"name" validate:"required"`
	Description  string `query:"description"`
}

// handleStrategyCreate serves POST /api/v1/copy-trading/strategies.
func (s *Server) handleStrategyCreate(w http.ResponseWriter, req bunrouter.Request, p *strategyCreateParams) error {
	st, err := s.copy.PublishStrategy(req.Context(), principal(req.Context()).UserID, p.StrategyHash, p.Name, p.Description)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": st.ID.String(), "strategyHash": st.StrategyHash, "name": st.Name,
		"description": st.Description, "publishedAt": timestamp(st.PublishedAt)})
}

// handleStrategyDelete serves DELETE /api/v1/copy-trading/strategies/:id.
func (s *Server) handleStrategyDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	st, err := s.copy.UnpublishStrategy(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": st.ID.String(), "status": "unpublished"})
}

// notificationJSON is a notification as the API shows it.
type notificationJSON struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Message   string          `json:"message"`
	Data      json.RawMessage `json:"data"`
	CreatedAt timestamp       `json:"createdAt"`
	ReadAt    *timestamp      `json:"readAt"`
}

func newNotificationJSON(n copytrading.Notification) notificationJSON {
	return notificationJSON{ID: n.ID.String(), Kind: n.Kind, Message: n.Message, Data: json.RawMessage(n.Data),
		CreatedAt: timestamp(n.CreatedAt), ReadAt: optTimestamp(n.ReadAt)}
}

// notificationListParams are the parameters of GET /api/v1/notifications.
type notificationListParams struct {
	Unread bool `query:"unread" default:"false"`
	pageParams
}

// handleNotificationList serves GET /api/v1/notifications: newest first,
// paginated; unread=true leaves out those read.
func (s *Server) handleNotificationList(w http.ResponseWriter, req bunrouter.Request, p *notificationListParams) error {
	list, total, err := s.copy.Notifications(req.Context(), principal(req.Context()).UserID, p.Unread, p.Page, p.Limit)
	if err != nil {
		return err
	}
	out := make([]notificationJSON, len(list))
	for i, n := range list {
		out[i] = newNotificationJSON(n)
	}
	s.writeJSON(w, http.StatusOK, listJSON{Data: out, Meta: metaJSON{Total: total, Page: p.Page, Limit: p.Limit}})
	return nil
}

// handleNotificationRead serves POST /api/v1/notifications/:id/read.
func (s *Server) handleNotificationRead(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	n, err := s.copy.MarkRead(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, newNotificationJSON(n))
}
