package server

import (
	"context"
	"net/http"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"
	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/studies"
)

// firingsShown is how many of an alert's latest firings its detail shows.
const firingsShown = 20

// watchlistJSON is a watchlist as the list shows it.
type watchlistJSON struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	AssetCount int       `json:"assetCount"`
	CreatedAt  timestamp `json:"createdAt"`
	UpdatedAt  timestamp `json:"updatedAt"`
}

func newWatchlistJSON(w alerts.Watchlist) watchlistJSON {
	return watchlistJSON{ID: w.ID.String(), Name: w.Name, AssetCount: w.AssetCount, CreatedAt: timestamp(w.CreatedAt), UpdatedAt: timestamp(w.UpdatedAt)}
}

// watchlistAssetJSON is an asset of a watchlist's detail: its latest
// close, the change from the close before, and its indicator summary.
// The figures are null for an asset without prices (or one bar, for the
// change).
type watchlistAssetJSON struct {
	AssetID    string         `json:"assetId"`
	Symbol     string         `json:"symbol"`
	Name       string         `json:"name"`
	AddedAt    timestamp      `json:"addedAt"`
	Date       *string        `json:"date"`
	Close      *number        `json:"close"`
	Change     *number        `json:"change"`
	ChangePct  *float         `json:"changePct"`
	Indicators map[string]any `json:"indicators"`
}

// newWatchlistAssetJSON returns the detail of item from its daily bars
// and its summary's latest values.
func newWatchlistAssetJSON(item alerts.WatchlistAsset, bars ohlcv.Series, summary []studies.Latest) watchlistAssetJSON {
	out := watchlistAssetJSON{AssetID: item.AssetID.String(), Symbol: item.Symbol, Name: item.Name, AddedAt: timestamp(item.AddedAt),
		Indicators: make(map[string]any, len(summary))}
	for _, l := range summary {
		out.Indicators[l.Spec.Name()] = latestJSON(l)
	}
	n := len(bars.Dates)
	if n == 0 {
		return out
	}
	date := bars.Dates[n-1].String()
	// Stored closes are decimals that float64 carries exactly to their
	// shortest text; the change is taken between those decimals.
	c := decimal.NewFromFloat(bars.Close[n-1])
	out.Date, out.Close = &date, (*number)(&c)
	if n > 1 {
		p := decimal.NewFromFloat(bars.Close[n-2])
		ch := c.Sub(p)
		out.Change = (*number)(&ch)
		if !p.IsZero() {
			pct := float((bars.Close[n-1]/bars.Close[n-2] - 1) * 100)
			out.ChangePct = &pct
		}
	}
	return out
}

// handleWatchlistList serves GET /api/v1/watchlists.
func (s *Server) handleWatchlistList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.alerts.Watchlists(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]watchlistJSON, len(list))
	for i, l := range list {
		out[i] = newWatchlistJSON(l)
	}
	return s.writeData(w, out)
}

// watchlistCreateParams are the parameters of POST /api/v1/watchlists.
type watchlistCreateParams struct {
	Name string `query:"name" validate:"required" hint:"a name such as Tech"`
}

// handleWatchlistCreate serves POST /api/v1/watchlists.
func (s *Server) handleWatchlistCreate(w http.ResponseWriter, req bunrouter.Request, p *watchlistCreateParams) error {
	wl, err := s.alerts.CreateWatchlist(req.Context(), principal(req.Context()).UserID, p.Name)
	if err != nil {
		return err
	}
	return s.writeData(w, newWatchlistJSON(wl))
}

// handleWatchlistGet serves GET /api/v1/watchlists/:id: the watchlist
// with each asset's latest close, change and indicator summary.
func (s *Server) handleWatchlistGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	ctx := req.Context()
	wl, items, err := s.alerts.Watchlist(ctx, principal(ctx).UserID, p.ID)
	if err != nil {
		return err
	}
	assets := make([]watchlistAssetJSON, len(items))
	for i, item := range items {
		if assets[i], err = s.watchlistAsset(ctx, item); err != nil {
			return err
		}
	}
	return s.writeData(w, struct {
		watchlistJSON
		Assets []watchlistAssetJSON `json:"assets"`
	}{newWatchlistJSON(wl), assets})
}

// watchlistAsset returns the detail of one asset of a watchlist, from the
// indicator service's caches.
func (s *Server) watchlistAsset(ctx context.Context, item alerts.WatchlistAsset) (watchlistAssetJSON, error) {
	ls, _, err := s.studies.Latest(ctx, item.AssetID, false, studies.SummarySpecs, []ohlcv.Timeframe{ohlcv.Daily})
	if err != nil {
		return watchlistAssetJSON{}, err
	}
	bars, _, err := s.studies.Bars(ctx, item.AssetID, false)
	if err != nil {
		return watchlistAssetJSON{}, err
	}
	return newWatchlistAssetJSON(item, bars, ls[0]), nil
}

// watchlistPatchParams are the parameters of PATCH /api/v1/watchlists/:id.
type watchlistPatchParams struct {
	ID   uuid.UUID `path:"id"`
	Name string    `query:"name" validate:"required" hint:"the new name"`
}

// handleWatchlistPatch serves PATCH /api/v1/watchlists/:id: a rename.
func (s *Server) handleWatchlistPatch(w http.ResponseWriter, req bunrouter.Request, p *watchlistPatchParams) error {
	wl, err := s.alerts.RenameWatchlist(req.Context(), principal(req.Context()).UserID, p.ID, p.Name)
	if err != nil {
		return err
	}
	return s.writeData(w, newWatchlistJSON(wl))
}

// handleWatchlistDelete serves DELETE /api/v1/watchlists/:id.
func (s *Server) handleWatchlistDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	if err := s.alerts.DeleteWatchlist(req.Context(), principal(req.Context()).UserID, p.ID); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": p.ID.String(), "status": "deleted"})
}

// watchlistAddParams are the parameters of POST
// /api/v1/watchlists/:id/assets.
type watchlistAddParams struct {
	ID      uuid.UUID `path:"id"`
	AssetID uuid.UUID `query:"assetId" validate:"required"`
}

// handleWatchlistAdd serves POST /api/v1/watchlists/:id/assets: the
// watchlist, with its new count.
func (s *Server) handleWatchlistAdd(w http.ResponseWriter, req bunrouter.Request, p *watchlistAddParams) error {
	wl, err := s.alerts.AddAsset(req.Context(), principal(req.Context()).UserID, p.ID, p.AssetID)
	if err != nil {
		return err
	}
	return s.writeData(w, newWatchlistJSON(wl))
}

// watchlistRemoveParams are the parameters of DELETE
// /api/v1/watchlists/:id/assets/:assetId.
type watchlistRemoveParams struct {
	ID      uuid.UUID `path:"id"`
	AssetID uuid.UUID `path:"assetId"`
}

// handleWatchlistRemove serves DELETE /api/v1/watchlists/:id/assets/:assetId.
func (s *Server) handleWatchlistRemove(w http.ResponseWriter, req bunrouter.Request, p *watchlistRemoveParams) error {
	if err := s.alerts.RemoveAsset(req.Context(), principal(req.Context()).UserID, p.ID, p.AssetID); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"watchlistId": p.ID.String(), "assetId": p.AssetID.String(), "status": "removed"})
}

// alertJSON is an alert as the API shows it.
type alertJSON struct {
	ID          string     `json:"id"`
	Name        string     `json:"name"`
	AssetID     string     `json:"assetId"`
	Symbol      string     `json:"symbol"`
	Condition   string     `json:"condition"`
	WebhookID   *string    `json:"webhookId"`
	Once        bool       `json:"once"`
	Adjusted    bool       `json:"adjusted"`
	Status      string     `json:"status"`
	FiredCount  int        `json:"firedCount"`
	LastFiredAt *timestamp `json:"lastFiredAt"`
	CreatedAt   timestamp  `json:"createdAt"`
}

func newAlertJSON(a alerts.Alert) alertJSON {
	out := alertJSON{ID: a.ID.String(), Name: a.Name, AssetID: a.AssetID.String(), Symbol: a.Symbol, Condition: a.Condition,
		Once: a.Once, Adjusted: a.Adjusted, Status: a.Status, FiredCount: a.FiredCount, LastFiredAt: optTimestamp(a.LastFiredAt), CreatedAt: timestamp(a.CreatedAt)}
	if a.WebhookID != nil {
		id := a.WebhookID.String()
		out.WebhookID = &id
	}
	return out
}

// handleAlertList serves GET /api/v1/alerts.
func (s *Server) handleAlertList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.alerts.Alerts(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]alertJSON, len(list))
	for i, a := range list {
		out[i] = newAlertJSON(a)
	}
	return s.writeData(w, out)
}

// alertCreateParams are the parameters of POST /api/v1/alerts.
type alertCreateParams struct {
	AssetID   uuid.UUID  `query:"assetId" validate:"required"`
	Condition string     `query:"condition" validate:"required" hint:"a formula such as close > sma(close, 50)"`
	Name      string     `query:"name" validate:"required"`
	WebhookID *uuid.UUID `query:"webhookId"`
	Once      bool       `query:"once" default:"true"`
	Adjusted  bool       `query:"adjusted" default:"true"`
}

// input returns the alert the parameters describe.
func (p *alertCreateParams) input() alerts.AlertInput {
	return alerts.AlertInput{AssetID: p.AssetID, Name: p.Name, Condition: p.Condition, WebhookID: p.WebhookID, Once: p.Once, Adjusted: p.Adjusted}
}

// check parses the condition and checks the name before any lookup.
func (p *alertCreateParams) check() error { return p.input().Validate() }

// handleAlertCreate serves POST /api/v1/alerts.
func (s *Server) handleAlertCreate(w http.ResponseWriter, req bunrouter.Request, p *alertCreateParams) error {
	a, err := s.alerts.CreateAlert(req.Context(), principal(req.Context()).UserID, p.input())
	if err != nil {
		return err
	}
	return s.writeData(w, newAlertJSON(a))
}

// firingJSON is one firing of an alert.
type firingJSON struct {
	Date           string    `json:"date"`
	FiredAt        timestamp `json:"firedAt"`
	NotificationID string    `json:"notificationId"`
}

// handleAlertGet serves GET /api/v1/alerts/:id: the alert with its latest
// firings, newest first.
func (s *Server) handleAlertGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	a, fs, err := s.alerts.Alert(req.Context(), principal(req.Context()).UserID, p.ID, firingsShown)
	if err != nil {
		return err
	}
	out := make([]firingJSON, len(fs))
	for i, f := range fs {
		out[i] = firingJSON{Date: f.BarDate, FiredAt: timestamp(f.FiredAt), NotificationID: f.NotificationID.String()}
	}
	return s.writeData(w, struct {
		alertJSON
		Firings []firingJSON `json:"firings"`
	}{newAlertJSON(a), out})
}

// handleAlertDelete serves DELETE /api/v1/alerts/:id.
func (s *Server) handleAlertDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	if err := s.alerts.DeleteAlert(req.Context(), principal(req.Context()).UserID, p.ID); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": p.ID.String(), "status": "deleted"})
}

// webhookJSON is a webhook as the API shows it; Secret only in the answer
// to its creation.
type webhookJSON struct {
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	Secret    string    `json:"secret,omitempty"`
	CreatedAt timestamp `json:"createdAt"`
}

func newWebhookJSON(h alerts.Webhook) webhookJSON {
	return webhookJSON{ID: h.ID.String(), URL: h.URL, Secret: h.Secret, CreatedAt: timestamp(h.CreatedAt)}
}

// handleWebhookList serves GET /api/v1/webhooks.
func (s *Server) handleWebhookList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.alerts.Webhooks(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]webhookJSON, len(list))
	for i, h := range list {
		out[i] = newWebhookJSON(h)
	}
	return s.writeData(w, out)
}

// webhookCreateParams are the parameters of POST /api/v1/webhooks.
type webhookCreateParams struct {
	URL string `query:"url" validate:"required" hint:"the https URL to POST notifications to"`
}

// handleWebhookCreate serves POST /api/v1/webhooks: the webhook with its
// signing secret, shown this once.
func (s *Server) handleWebhookCreate(w http.ResponseWriter, req bunrouter.Request, p *webhookCreateParams) error {
	h, err := s.alerts.CreateWebhook(req.Context(), principal(req.Context()).UserID, p.URL)
	if err != nil {
		return err
	}
	return s.writeData(w, newWebhookJSON(h))
}

// handleWebhookDelete serves DELETE /api/v1/webhooks/:id.
func (s *Server) handleWebhookDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	if err := s.alerts.DeleteWebhook(req.Context(), principal(req.Context()).UserID, p.ID); err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": p.ID.String(), "status": "deleted"})
}

// deliveryJSON is a webhook delivery with the outcome of its last attempt.
type deliveryJSON struct {
	ID             string     `json:"id"`
	WebhookID      string     `json:"webhookId"`
	NotificationID string     `json:"notificationId"`
	Kind           string     `json:"kind"`
	Status         string     `json:"status"`
	Attempts       int        `json:"attempts"`
	ResponseStatus *int       `json:"responseStatus"`
	LatencyMS      *int64     `json:"latencyMs"`
	Error          string     `json:"error"`
	CreatedAt      timestamp  `json:"createdAt"`
	LastAttemptAt  *timestamp `json:"lastAttemptAt"`
	NextAttemptAt  *timestamp `json:"nextAttemptAt"`
	DeliveredAt    *timestamp `json:"deliveredAt"`
}

func newDeliveryJSON(d alerts.Delivery) deliveryJSON {
	out := deliveryJSON{ID: d.ID.String(), WebhookID: d.WebhookID.String(), NotificationID: d.NotificationID.String(), Kind: d.Kind,
		Status: d.Status, Attempts: d.Attempts, ResponseStatus: d.ResponseStatus, LatencyMS: d.LatencyMS, Error: d.Error,
		CreatedAt: timestamp(d.CreatedAt), LastAttemptAt: optTimestamp(d.LastAttemptAt), DeliveredAt: optTimestamp(d.DeliveredAt)}
	if d.Status == alerts.Pending {
		out.NextAttemptAt = optTimestamp(&d.NextAttemptAt)
	}
	return out
}

// deliveryListParams are the parameters of GET /api/v1/webhooks/:id/deliveries.
type deliveryListParams struct {
	ID uuid.UUID `path:"id"`
	pageParams
}

// handleDeliveryList serves GET /api/v1/webhooks/:id/deliveries: newest
// first, paginated.
func (s *Server) handleDeliveryList(w http.ResponseWriter, req bunrouter.Request, p *deliveryListParams) error {
	list, total, err := s.alerts.Deliveries(req.Context(), principal(req.Context()).UserID, p.ID, p.Page, p.Limit)
	if err != nil {
		return err
	}
	out := make([]deliveryJSON, len(list))
	for i, d := range list {
		out[i] = newDeliveryJSON(d)
	}
	s.writeJSON(w, http.StatusOK, listJSON{Data: out, Meta: metaJSON{Total: total, Page: p.Page, Limit: p.Limit}})
	return nil
}
