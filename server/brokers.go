package server

import (
	"net/http"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/calendar"
)

// providerJSON is a provider as GET /brokers/providers lists it.
type providerJSON struct {
	Provider  string  `json:"provider"`
	Name      string  `json:"name"`
	Available bool    `json:"available"`
	Configure *string `json:"configure"` // what to configure, when not available
}

// handleProviderList serves GET /api/v1/brokers/providers. A provider is
// available when connecting to it can succeed: both need the secret key
// that seals broker tokens (without it connecting answers 503, and both
// say so in configure), and alpaca its OAuth app.
func (s *Server) handleProviderList(w http.ResponseWriter, req bunrouter.Request) error {
	paper := providerJSON{Provider: "paper", Name: "Tradekit paper broker (built in)", Available: true}
	alpaca := providerJSON{Provider: "alpaca", Name: "Alpaca", Available: s.cfg.Brokers.Alpaca != nil}
	if !alpaca.Available {
		how := alpacaConfigure
		alpaca.Configure = &how
	}
	if !s.connect.CanConnect() {
		for _, p := range []*providerJSON{&paper, &alpaca} {
			how := connect.NeedSecretKey
			if p.Configure != nil {
				how += "; and " + *p.Configure
			}
			p.Available, p.Configure = false, &how
		}
	}
	return s.writeData(w, []providerJSON{paper, alpaca})
}

// connectionJSON is a connection as the API shows it.
type connectionJSON struct {
	ID          string     `json:"id"`
	Provider    string     `json:"provider"`
	Status      string     `json:"status"`
	AccountName *string    `json:"accountName"`
	LastSyncAt  *timestamp `json:"lastSyncAt"`
	CreatedAt   timestamp  `json:"createdAt"`
	// Beyond the spec: the state of the last sync and why the last
	// authorization or sync failed.
	SyncStatus *string `json:"syncStatus"`
	Error      *string `json:"error"`
	// Beyond the spec: when a sync last set the exposure ledger to the
	// broker's account, and the differences it found then (null when
	// none).
	ReconciledAt *timestamp `json:"reconciledAt"`
	LedgerDrift  *string    `json:"ledgerDrift"`
}

func newConnectionJSON(c connect.Connection) connectionJSON {
	out := connectionJSON{ID: c.ID.String(), Provider: c.Provider, Status: c.Status, CreatedAt: timestamp(c.CreatedAt),
		AccountName: nonEmpty(c.AccountName), SyncStatus: nonEmpty(c.SyncStatus), Error: nonEmpty(c.LastError),
		LastSyncAt: optTimestamp(c.LastSyncAt), ReconciledAt: optTimestamp(c.ReconciledAt), LedgerDrift: nonEmpty(c.LedgerDrift)}
	return out
}

// nonEmpty returns nil for "", for JSON null.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// handleConnectionList serves GET /api/v1/brokers/connections.
func (s *Server) handleConnectionList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.trading.Connections(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]connectionJSON, len(list))
	for i, c := range list {
		out[i] = newConnectionJSON(c)
	}
	return s.writeData(w, out)
}

// connectionCreateParams are the parameters of POST
// /api/v1/brokers/connections. Package connect checks both.
type connectionCreateParams struct {
	Provider    string `query:"provider" validate:"required" hint:"a provider that GET /api/v1/brokers/providers lists, such as paper"`
	RedirectURL string `query:"redirectUrl" validate:"required"`
}

// handleConnectionCreate serves POST /api/v1/brokers/connections.
func (s *Server) handleConnectionCreate(w http.ResponseWriter, req bunrouter.Request, p *connectionCreateParams) error {
	c, authURL, err := s.connect.Connect(req.Context(), principal(req.Context()).UserID, p.Provider, p.RedirectURL)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": c.ID.String(), "provider": c.Provider, "status": c.Status, "authorizationUrl": authURL})
}

// handleConnectionDelete serves DELETE /api/v1/brokers/connections/:id.
func (s *Server) handleConnectionDelete(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	c, err := s.connect.Disconnect(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]string{"id": c.ID.String(), "status": c.Status})
}

// handleConnectionSync serves POST /api/v1/brokers/connections/:id/sync.
func (s *Server) handleConnectionSync(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	log, err := s.connect.StartSync(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	return s.writeData(w, map[string]any{"id": p.ID.String(), "syncId": log.ID.String(), "syncStatus": log.Status,
		"startedAt": timestamp(log.StartedAt)})
}

// syncLogJSON is a sync log entry as the API shows it.
type syncLogJSON struct {
	SyncID          string     `json:"syncId"`
	Status          string     `json:"status"`
	PositionsSynced *int       `json:"positionsSynced,omitempty"`
	Error           *string    `json:"error,omitempty"`
	StartedAt       timestamp  `json:"startedAt"`
	CompletedAt     *timestamp `json:"completedAt"`
}

// handleConnectionLogs serves GET /api/v1/brokers/connections/:id/logs.
func (s *Server) handleConnectionLogs(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	logs, err := s.trading.Logs(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	out := make([]syncLogJSON, len(logs))
	for i, l := range logs {
		out[i] = syncLogJSON{SyncID: l.ID.String(), Status: l.Status, PositionsSynced: l.PositionsSynced,
			Error: nonEmpty(l.Error), StartedAt: timestamp(l.StartedAt)}
		if l.CompletedAt != nil {
			t := timestamp(*l.CompletedAt)
			out[i].CompletedAt = &t
		}
	}
	return s.writeData(w, out)
}

// oauthCallbackParams are the parameters of GET
// /api/v1/brokers/oauth/callback: those of an OAuth 2.0 authorization
// response. A broker may add others, which RFC 6749 4.1.2 tells clients
// to ignore: the route is lenient. Package connect checks state.
type oauthCallbackParams struct {
	lenient
	State            string `query:"state"`
	Code             string `query:"code"`
	Error            string `query:"error"`
	ErrorDescription string `query:"error_description"`
}

// handleOAuthCallback serves GET /api/v1/brokers/oauth/callback, which the
// user's browser reaches from the broker: no API key. It answers 303 to
// the connection's redirect URL.
func (s *Server) handleOAuthCallback(w http.ResponseWriter, req bunrouter.Request, p *oauthCallbackParams) error {
	to, err := s.connect.Callback(req.Context(), p.State, p.Code, p.Error, p.ErrorDescription)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, req.Request, to, http.StatusSeeOther)
	return nil
}

// positionJSON is a portfolio's position as the API shows it.
type positionJSON struct {
	Symbol        string  `json:"symbol"`
	AssetID       *string `json:"assetId"`
	Quantity      number  `json:"quantity"`
	AverageCost   number  `json:"averageCost"`
	Price         *number `json:"price"`     // the latest stored close, null without one
	PriceDate     *string `json:"priceDate"` // its date
	MarketValue   number  `json:"marketValue"`
	UnrealizedPnL number  `json:"unrealizedPnl"`
}

// portfolioJSON is a portfolio as the API shows it.
type portfolioJSON struct {
	ID           string         `json:"id"`
	ConnectionID string         `json:"connectionId"`
	Currency     string         `json:"currency"`
	Cash         number         `json:"cash"`
	Equity       number         `json:"equity"`
	BrokerEquity number         `json:"brokerEquity"`
	Positions    []positionJSON `json:"positions"`
	UpdatedAt    timestamp      `json:"updatedAt"`
}

func (s *Server) portfolioJSON(req bunrouter.Request, p connect.Portfolio) (portfolioJSON, error) {
	valued, equity, err := connect.Value(req.Context(), s.marketdb, p)
	if err != nil {
		return portfolioJSON{}, err
	}
	out := portfolioJSON{ID: p.ID.String(), ConnectionID: p.ConnectionID.String(), Currency: p.Currency, Cash: number(p.Cash),
		Equity: number(equity), BrokerEquity: number(p.Equity), Positions: make([]positionJSON, len(valued)), UpdatedAt: timestamp(p.UpdatedAt)}
	for i, v := range valued {
		x := positionJSON{Symbol: v.Symbol, Quantity: number(v.Quantity), AverageCost: number(v.AverageCost),
			MarketValue: number(v.MarketValue), UnrealizedPnL: number(v.UnrealizedPnL)}
		if v.AssetID != nil {
			id := v.AssetID.String()
			x.AssetID = &id
		}
		if v.PriceDate.IsValid() {
			pr, d := number(v.Price), v.PriceDate.String()
			x.Price, x.PriceDate = &pr, &d
		}
		out.Positions[i] = x
	}
	return out, nil
}

// handlePortfolioList serves GET /api/v1/portfolios.
func (s *Server) handlePortfolioList(w http.ResponseWriter, req bunrouter.Request) error {
	list, err := s.trading.Portfolios(req.Context(), principal(req.Context()).UserID)
	if err != nil {
		return err
	}
	out := make([]portfolioJSON, len(list))
	for i, p := range list {
		if out[i], err = s.portfolioJSON(req, p); err != nil {
			return err
		}
	}
	return s.writeData(w, out)
}

// handlePortfolioGet serves GET /api/v1/portfolios/:id.
func (s *Server) handlePortfolioGet(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	pf, err := s.trading.Portfolio(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	out, err := s.portfolioJSON(req, pf)
	if err != nil {
		return err
	}
	return s.writeData(w, out)
}

// handlePortfolioHistory serves GET /api/v1/portfolios/:id/history: daily
// equity, oldest first.
func (s *Server) handlePortfolioHistory(w http.ResponseWriter, req bunrouter.Request, p *idParams) error {
	h, err := s.trading.History(req.Context(), principal(req.Context()).UserID, p.ID)
	if err != nil {
		return err
	}
	type pointJSON struct {
		Date   string `json:"date"`
		Equity number `json:"equity"`
	}
	out := make([]pointJSON, len(h))
	for i, p := range h {
		out[i] = pointJSON{Date: calendar.Date(p.Date).String(), Equity: number(p.Equity)}
	}
	return s.writeData(w, out)
}

// alpacaConfigure says what makes the alpaca provider available.
const alpacaConfigure = "set TRADEKIT_ALPACA_CLIENT_ID and TRADEKIT_ALPACA_CLIENT_SECRET (an OAuth app registered at Alpaca " +
	"with this server's callback URL)"
