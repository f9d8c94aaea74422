package server

import (
	"encoding/json"
	"math"
	"net/http"
	"strconv"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/copytrading"
)

// fraction writes a float64 figure as a JSON number: the shortest text
// that reads back as the same float64, and 0 for NaN or infinities,
// which JSON cannot hold.
type fraction float64

// MarshalJSON implements [json.Marshaler].
func (f fraction) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("0"), nil
	}
	return strconv.AppendFloat(nil, float64(f), 'g', -1, 64), nil
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

// handleLeaderList serves GET /api/v1/copy-trading/leaders.
func (s *Server) handleLeaderList(w http.ResponseWriter, req bunrouter.Request) error {
	f := copytrading.LeaderFilter{SortBy: req.URL.Query().Get("sortBy")}
	var err error
	if f.Page, err = queryInt(req, "page", 1, 1, 1_000_000); err != nil {
		return err
	}
	if f.Limit, err = queryInt(req, "limit", 20, 1, 100); err != nil {
		return err
	}
	if v := req.URL.Query().Get("minReturn"); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil || !(r >= -1 && r <= 1e6) { // NaN fails both
			return invalidParam("minReturn", "must be a fraction such as 0.1 (10 %%), at least -1, got %s", tradekit.Quote(v))
		}
		f.MinReturn = &r
	}
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
func (s *Server) handleLeaderGet(w http.ResponseWriter, req bunrouter.Request) error {
	d, err := s.copy.LeaderBySlug(req.Context(), pathParam(req, "slug"))
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
func (s *Server) handleLeaderTransactions(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.copy.Transactions(req.Context(), pathParam(req, "slug"))
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

// queryControls reads the copy controls of a follow's query.
func queryControls(req bunrouter.Request) (copytrading.ControlsPatch, error) {
	var c copytrading.ControlsPatch
	q := req.URL.Query()
	if v := q.Get("connectionId"); v != "" {
		id, err := uuid.Parse(v)
		if err != nil {
			return c, invalidParam("connectionId", "must be a UUID, got %s", tradekit.Quote(v))
		}
		c.ConnectionID = &id
	}
	for _, p := range []struct {
		name string
		to   **decimal.Decimal
	}{{"allocationPct", &c.AllocationPct}, {"scalingPct", &c.ScalingPct}, {"maxPositionPct", &c.MaxPositionPct}, {"copyStopLossPct", &c.CopyStopLossPct}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		d, err := decimal.NewFromString(v)
		if err != nil {
			return c, invalidParam(p.name, "must be a number, got %s", tradekit.Quote(v))
		}
		*p.to = &d
	}
	return c, nil
}

// handleFollowCreate serves POST /api/v1/copy-trading/follow.
func (s *Server) handleFollowCreate(w http.ResponseWriter, req bunrouter.Request) error {
	var in copytrading.FollowInput
	var err error
	if in.LeaderProfileID, err = queryUUID(req, "leaderProfileId"); err != nil {
		return err
	}
	if in.AutoSync, err = queryBool(req, "autoSync", false); err != nil {
		return err
	}
	if in.Notifications, err = queryBool(req, "notifications", true); err != nil {
		return err
	}
	if in.Controls, err = queryControls(req); err != nil {
		return err
	}
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
func (s *Server) handleFollowDelete(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	f, err := s.copy.Unfollow(req.Context(), principal(req.Context()).UserID, id)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": f.ID.String(), "status": "unfollowed"})
}

// handleFollowSync serves PATCH /api/v1/copy-trading/follow/:id/sync.
func (s *Server) handleFollowSync(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	if req.URL.Query().Get("autoSync") == "" {
		return invalidParam("autoSync", "is required: true or false")
	}
	on, err := queryBool(req, "autoSync", false)
	if err != nil {
		return err
	}
	f, err := s.copy.UpdateFollow(req.Context(), principal(req.Context()).UserID, id, copytrading.FollowPatch{AutoSync: &on})
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": f.ID.String(), "autoSync": f.AutoSync, "updatedAt": timestamp(f.UpdatedAt)})
}

// handleFollowPatch serves PATCH /api/v1/copy-trading/follow/:id (beyond
// the spec): autoSync, notifications and the copy controls; only those
// given change.
func (s *Server) handleFollowPatch(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	var p copytrading.FollowPatch
	for _, b := range []struct {
		name string
		to   **bool
	}{{"autoSync", &p.AutoSync}, {"notifications", &p.Notifications}} {
		if req.URL.Query().Get(b.name) != "" {
			v, err := queryBool(req, b.name, false)
			if err != nil {
				return err
			}
			*b.to = &v
		}
	}
	if p.Controls, err = queryControls(req); err != nil {
		return err
	}
	f, err := s.copy.UpdateFollow(req.Context(), principal(req.Context()).UserID, id, p)
	if err != nil {
		return err
	}
	out := newFollowJSON(f)
	at := timestamp(f.UpdatedAt)
	out.UpdatedAt = &at
	return s.writeData(w, out)
}

// handlePublish serves POST /api/v1/copy-trading/publish.
func (s *Server) handlePublish(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := queryUUID(req, "portfolioId")
	if err != nil {
		return err
	}
	q := req.URL.Query()
	p, err := s.copy.Publish(req.Context(), principal(req.Context()).UserID, copytrading.PublishInput{
		PortfolioID: id, DisplayName: q.Get("displayName"), Slug: q.Get("slug"), Bio: q.Get("bio")})
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

// handleStrategyCreate serves POST /api/v1/copy-trading/strategies.
func (s *Server) handleStrategyCreate(w http.ResponseWriter, req bunrouter.Request) error {
	q := req.URL.Query()
	st, err := s.copy.PublishStrategy(req.Context(), principal(req.Context()).UserID, q.Get("strategyHash"), q.Get("name"), q.Get("description"))
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": st.ID.String(), "strategyHash": st.StrategyHash, "name": st.Name,
		"description": st.Description, "publishedAt": timestamp(st.PublishedAt)})
}

// handleStrategyDelete serves DELETE /api/v1/copy-trading/strategies/:id.
func (s *Server) handleStrategyDelete(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	st, err := s.copy.UnpublishStrategy(req.Context(), principal(req.Context()).UserID, id)
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

// handleNotificationList serves GET /api/v1/notifications: newest first,
// paginated; unread=true leaves out those read.
func (s *Server) handleNotificationList(w http.ResponseWriter, req bunrouter.Request) error {
	unread, err := queryBool(req, "unread", false)
	if err != nil {
		return err
	}
	page, err := queryInt(req, "page", 1, 1, 1_000_000)
	if err != nil {
		return err
	}
	limit, err := queryInt(req, "limit", 20, 1, 100)
	if err != nil {
		return err
	}
	list, total, err := s.copy.Notifications(req.Context(), principal(req.Context()).UserID, unread, page, limit)
	if err != nil {
		return err
	}
	out := make([]notificationJSON, len(list))
	for i, n := range list {
		out[i] = newNotificationJSON(n)
	}
	s.writeJSON(w, http.StatusOK, listJSON{Data: out, Meta: metaJSON{Total: total, Page: page, Limit: limit}})
	return nil
}

// handleNotificationRead serves POST /api/v1/notifications/:id/read.
func (s *Server) handleNotificationRead(w http.ResponseWriter, req bunrouter.Request) error {
	id, err := pathUUID(req, "id")
	if err != nil {
		return err
	}
	n, err := s.copy.MarkRead(req.Context(), principal(req.Context()).UserID, id)
	if err != nil {
		return err
	}
	return s.writeData(w, newNotificationJSON(n))
}
