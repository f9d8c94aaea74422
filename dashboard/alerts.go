package dashboard

import (
	"errors"
	"html/template"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/ohlcv"
	"github.com/tradekit/tradekit/studies"
)

// The pages of watchlists, alerts and webhooks.
var alertsPages = []string{"watchlists", "watchlists-detail", "alerts", "alerts-detail", "webhooks", "webhooks-deliveries"}

const (
	// firingsShown is how many of an alert's latest firings its page shows.
	firingsShown = 50
	// deliveriesPerPage is the page size of a webhook's delivery log.
	deliveriesPerPage = 50
)

// alertRoutes adds the watchlist, alert and webhook pages when the
// dashboard has an alerts service.
func (h *Handler) alertRoutes() {
	if h.cfg.Alerts == nil {
		return
	}
	for _, p := range alertsPages {
		h.pages[p] = template.Must(template.New(p+".html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+p+".html"))
	}
	h.mux.HandleFunc("GET /dashboard/watchlists", h.watchlistsPage)
	h.mux.HandleFunc("POST /dashboard/watchlists", h.createWatchlist)
	h.mux.HandleFunc("GET /dashboard/watchlists/{id}", h.watchlistPage)
	h.mux.HandleFunc("POST /dashboard/watchlists/{id}/rename", h.renameWatchlist)
	h.mux.HandleFunc("POST /dashboard/watchlists/{id}/delete", h.deleteWatchlist)
	h.mux.HandleFunc("POST /dashboard/watchlists/{id}/assets", h.addWatchlistAsset)
	h.mux.HandleFunc("POST /dashboard/watchlists/{id}/assets/{assetId}/remove", h.removeWatchlistAsset)
	h.mux.HandleFunc("GET /dashboard/alerts", h.alertsPage)
	h.mux.HandleFunc("POST /dashboard/alerts", h.createAlert)
	h.mux.HandleFunc("GET /dashboard/alerts/{id}", h.alertPage)
	h.mux.HandleFunc("POST /dashboard/alerts/{id}/delete", h.deleteAlert)
	if h.cfg.Copy != nil { // the notifications' reader
		h.mux.HandleFunc("POST /dashboard/alerts/notifications/{id}/read", h.markAlertRead)
	}
	h.mux.HandleFunc("GET /dashboard/webhooks", h.webhooksPage)
	h.mux.HandleFunc("POST /dashboard/webhooks", h.createWebhook)
	h.mux.HandleFunc("GET /dashboard/webhooks/{id}", h.deliveriesPage)
	h.mux.HandleFunc("POST /dashboard/webhooks/{id}/delete", h.deleteWebhook)
}

// pathID returns the path's UUID value name, or answers 404 and returns
// ok false.
func pathID(w http.ResponseWriter, r *http.Request, name string) (uuid.UUID, bool) {
	id, err := uuid.Parse(r.PathValue(name))
	if err != nil {
		http.NotFound(w, r)
		return uuid.Nil, false
	}
	return id, true
}

// withID is [Handler.withSession] for the pages of one watchlist, alert
// or webhook: fn gets the path's id, and a path whose id is no UUID
// answers 404.
func (h *Handler) withID(w http.ResponseWriter, r *http.Request, fn func(v visit, id uuid.UUID)) {
	h.withSession(w, r, func(v visit) {
		if id, ok := pathID(w, r, "id"); ok {
			fn(v, id)
		}
	})
}

// found reports whether err is nil; else it answers 404 for an error
// wrapping tradekit.ErrNotFound (another user's or a deleted item), or
// the error page for any other.
func (h *Handler) found(v visit, err error) bool {
	switch {
	case errors.Is(err, tradekit.ErrNotFound):
		http.NotFound(v.w, v.r)
	case err != nil:
		h.fail(v.w, err)
	default:
		return true
	}
	return false
}

// hookURL returns the URL of the user's live webhook id, "" when the user
// has no such live webhook.
func (h *Handler) hookURL(v visit, id uuid.UUID) (string, error) {
	hooks, err := h.cfg.Alerts.Webhooks(v.r.Context(), v.u.ID)
	if err != nil {
		return "", err
	}
	for _, wh := range hooks {
		if wh.ID == id {
			return wh.URL, nil
		}
	}
	return "", nil
}

// fieldErrors is [formErrors] with the whole form's error put beside the
// field instead, for a form of one field (or whose refusals all concern
// one field). Any error that is no user's doing gives ok false.
func fieldErrors(err error, field string) (map[string]string, bool) {
	errs, ok := formErrors(err)
	if msg, whole := errs["form"]; ok && whole {
		delete(errs, "form")
		errs[field] = msg
	}
	return errs, ok
}

// watchlistsData is the watchlists page's.
type watchlistsData struct {
	Lists []alerts.Watchlist
}

// watchlistsPage lists the user's watchlists, with a form to create one.
func (h *Handler) watchlistsPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showWatchlists(v, http.StatusOK, page{Notice: notice(r)})
	})
}

func (h *Handler) showWatchlists(v visit, status int, p page) {
	lists, err := h.cfg.Alerts.Watchlists(v.r.Context(), v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	p.Data = watchlistsData{Lists: lists}
	h.show(v, status, "watchlists", "Watchlists", p)
}

// createWatchlist creates a watchlist and opens it.
func (h *Handler) createWatchlist(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		name := strings.TrimSpace(r.PostFormValue("name"))
		wl, err := h.cfg.Alerts.CreateWatchlist(r.Context(), v.u.ID, name)
		if errs, ok := formErrors(err); ok {
			h.showWatchlists(v, http.StatusBadRequest, page{Errors: errs, Form: map[string]string{"name": name}})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		back(v, "/dashboard/watchlists/"+wl.ID.String(), noticeWatchlistCreated)
	})
}

// watchlistData is a watchlist's page's.
type watchlistData struct {
	List   alerts.Watchlist
	Assets []watchlistRow
}

// watchlistRow is an asset of a watchlist as its page shows it: the
// latest close and its change, "" for an asset without prices (or with
// one bar, for the change), and the indicator summary.
type watchlistRow struct {
	alerts.WatchlistAsset
	Date, Close, Change, ChangePct string
	Indicators                     []indicatorCell
}

// indicatorCell is one indicator of a summary, formatted.
type indicatorCell struct{ Name, Value string }

// watchlistPage shows a watchlist: each asset's latest close, change and
// indicator summary, with the forms that rename the list and add and
// remove assets.
func (h *Handler) watchlistPage(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		h.showWatchlist(v, http.StatusOK, id, page{Notice: notice(r)})
	})
}

func (h *Handler) showWatchlist(v visit, status int, id uuid.UUID, p page) {
	ctx := v.r.Context()
	wl, items, err := h.cfg.Alerts.Watchlist(ctx, v.u.ID, id)
	if !h.found(v, err) {
		return
	}
	d := watchlistData{List: wl, Assets: make([]watchlistRow, len(items))}
	for i, item := range items {
		ls, _, err := h.cfg.Studies.Latest(ctx, item.AssetID, false, studies.SummarySpecs, []ohlcv.Timeframe{ohlcv.Daily})
		if err != nil {
			h.fail(v.w, err)
			return
		}
		bars, _, err := h.cfg.Studies.Bars(ctx, item.AssetID, false)
		if err != nil {
			h.fail(v.w, err)
			return
		}
		d.Assets[i] = newWatchlistRow(item, bars, ls[0])
	}
	if p.Form == nil {
		p.Form = map[string]string{"name": wl.Name}
	}
	p.Data = d
	h.show(v, status, "watchlists-detail", wl.Name, p)
}

// newWatchlistRow returns the row of item from its daily bars and its
// summary's latest values.
func newWatchlistRow(item alerts.WatchlistAsset, bars ohlcv.Series, summary []studies.Latest) watchlistRow {
	row := watchlistRow{WatchlistAsset: item}
	for _, l := range summary {
		row.Indicators = append(row.Indicators, indicatorCell{Name: l.Spec.Name(), Value: latestValue(l)})
	}
	n := len(bars.Dates)
	if n == 0 {
		return row
	}
	// Stored closes are decimals that float64 carries exactly to their
	// shortest text; the change is taken between those decimals.
	c := decimal.NewFromFloat(bars.Close[n-1])
	row.Date, row.Close = bars.Dates[n-1].String(), c.String()
	if n > 1 {
		prev := decimal.NewFromFloat(bars.Close[n-2])
		ch := c.Sub(prev)
		row.Change = ch.String()
		if ch.IsPositive() {
			row.Change = "+" + row.Change
		}
		if !prev.IsZero() {
			row.ChangePct = strconv.FormatFloat((bars.Close[n-1]/bars.Close[n-2]-1)*100, 'f', 2, 64) + " %"
		}
	}
	return row
}

// latestValue formats an indicator's latest value: MACD as value, signal
// and histogram, Bollinger bands as lower–middle–upper; "–" where the
// indicator is still warming up.
func latestValue(l studies.Latest) string {
	f := func(x float64) string {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "–"
		}
		return strconv.FormatFloat(x, 'f', 2, 64)
	}
	switch l.Spec.Kind {
	case studies.MACD:
		return f(l.Value) + " / " + f(l.Signal) + " / " + f(l.Histogram)
	case studies.BB:
		return f(l.Lower) + " – " + f(l.Value) + " – " + f(l.Upper)
	}
	return f(l.Value)
}

// renameWatchlist renames a watchlist.
func (h *Handler) renameWatchlist(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		name := strings.TrimSpace(r.PostFormValue("name"))
		_, err := h.cfg.Alerts.RenameWatchlist(r.Context(), v.u.ID, id, name)
		if errs, ok := fieldErrors(err, "name"); ok && !errors.Is(err, tradekit.ErrNotFound) {
			h.showWatchlist(v, http.StatusBadRequest, id, page{Errors: errs, Form: map[string]string{"name": name}})
			return
		}
		if !h.found(v, err) {
			return
		}
		back(v, "/dashboard/watchlists/"+id.String(), noticeWatchlistRenamed)
	})
}

// deleteWatchlist deletes a watchlist.
func (h *Handler) deleteWatchlist(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, func(uuid.UUID) string { return "/dashboard/watchlists" }, func(v visit, id uuid.UUID) (noticeCode, error) {
		return noticeWatchlistDeleted, h.cfg.Alerts.DeleteWatchlist(r.Context(), v.u.ID, id)
	})
}

// addWatchlistAsset adds the asset of a symbol to a watchlist.
func (h *Handler) addWatchlistAsset(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		ctx := r.Context()
		symbol := strings.ToUpper(strings.TrimSpace(r.PostFormValue("symbol")))
		refuse := func(msg string) {
			h.showWatchlist(v, http.StatusBadRequest, id, page{Errors: map[string]string{"symbol": msg}, Form: map[string]string{"symbol": symbol}})
		}
		if symbol == "" {
			refuse("Give the symbol of an asset, such as AAPL.")
			return
		}
		asset, err := h.cfg.Market.AssetBySymbol(ctx, symbol)
		if errors.Is(err, tradekit.ErrNotFound) {
			refuse("No asset has the symbol " + tradekit.Quote(symbol) + ".")
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		_, err = h.cfg.Alerts.AddAsset(ctx, v.u.ID, id, asset.ID)
		if errs, ok := fieldErrors(err, "symbol"); ok {
			if errors.Is(err, tradekit.ErrNotFound) { // the watchlist, deleted meanwhile
				http.NotFound(w, r)
				return
			}
			if errors.Is(err, tradekit.ErrConflict) {
				errs["symbol"] = "The watchlist holds " + strconv.Itoa(alerts.MaxWatchlistAssets) + " assets, the most it may hold: remove one first."
			}
			h.showWatchlist(v, http.StatusBadRequest, id, page{Errors: errs, Form: map[string]string{"symbol": symbol}})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		back(v, "/dashboard/watchlists/"+id.String(), noticeAssetAdded)
	})
}

// removeWatchlistAsset removes an asset from a watchlist.
func (h *Handler) removeWatchlistAsset(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		assetID, ok := pathID(w, r, "assetId")
		if !ok {
			return
		}
		msg := noticeAssetRemoved
		err := h.cfg.Alerts.RemoveAsset(r.Context(), v.u.ID, id, assetID)
		switch {
		case errors.Is(err, tradekit.ErrNotFound):
			msg = noticeAssetGone
		case err != nil:
			h.fail(w, err)
			return
		}
		back(v, "/dashboard/watchlists/"+id.String(), msg)
	})
}

// alertsData is the alerts page's.
type alertsData struct {
	Alerts   []alerts.Alert
	Webhooks []alerts.Webhook
	// HookURL maps the user's live webhooks to their URLs, for the list.
	HookURL map[uuid.UUID]string
	// Notifications are the latest of the alerts' own kinds
	// ([alerts.Kinds]), nil without the copy-trading service that reads
	// them; Unread counts those not read.
	Notifications []copytrading.Notification
	Unread        int
}

// alertsPage lists the user's alerts, with a form to create one.
func (h *Handler) alertsPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showAlerts(v, http.StatusOK, page{Notice: notice(r), Form: map[string]string{"once": "on"}})
	})
}

func (h *Handler) showAlerts(v visit, status int, p page) {
	ctx := v.r.Context()
	list, err := h.cfg.Alerts.Alerts(ctx, v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	hooks, err := h.cfg.Alerts.Webhooks(ctx, v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	d := alertsData{Alerts: list, Webhooks: hooks, HookURL: map[uuid.UUID]string{}}
	for _, wh := range hooks {
		d.HookURL[wh.ID] = wh.URL
	}
	if h.cfg.Copy != nil {
		if d.Notifications, _, err = h.cfg.Copy.NotificationsOfKinds(ctx, v.u.ID, alerts.Kinds(), false, 1, notificationsShown); err != nil {
			h.fail(v.w, err)
			return
		}
		for _, n := range d.Notifications {
			if n.ReadAt == nil {
				d.Unread++
			}
		}
	}
	p.Data = d
	h.show(v, status, "alerts", "Alerts", p)
}

// markAlertRead marks one of the Alerts page's notifications read and
// returns to the page; another user's is a 404.
func (h *Handler) markAlertRead(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		if _, err := h.cfg.Copy.MarkRead(r.Context(), v.u.ID, id); h.found(v, err) {
			http.Redirect(w, r, "/dashboard/alerts", http.StatusSeeOther)
		}
	})
}

// createAlert creates an alert on the asset of a symbol.
func (h *Handler) createAlert(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		ctx := r.Context()
		form := map[string]string{
			"symbol":    strings.ToUpper(strings.TrimSpace(r.PostFormValue("symbol"))),
			"name":      strings.TrimSpace(r.PostFormValue("name")),
			"condition": strings.TrimSpace(r.PostFormValue("condition")),
			"webhookId": r.PostFormValue("webhookId"),
			"once":      r.PostFormValue("once"),
		}
		in := alerts.AlertInput{Name: form["name"], Condition: form["condition"], Once: form["once"] == "on"}
		errs := map[string]string{}
		// Every field's error at once: the name's and the condition's
		// checks, then the lookups.
		for _, err := range []error{in.Validate(), conditionError(in.Condition)} {
			if e, ok := formErrors(err); ok {
				for k, m := range e {
					errs[k] = m
				}
			}
		}
		if form["symbol"] == "" {
			errs["symbol"] = "Give the symbol of the asset to watch, such as AAPL."
		} else if asset, err := h.cfg.Market.AssetBySymbol(ctx, form["symbol"]); errors.Is(err, tradekit.ErrNotFound) {
			errs["symbol"] = "No asset has the symbol " + tradekit.Quote(form["symbol"]) + "."
		} else if err != nil {
			h.fail(w, err)
			return
		} else {
			in.AssetID = asset.ID
		}
		if s := form["webhookId"]; s != "" {
			id, err := uuid.Parse(s)
			if err != nil {
				errs["webhookId"] = "Choose one of your webhooks."
			}
			in.WebhookID = &id
		}
		if len(errs) == 0 {
			_, err := h.cfg.Alerts.CreateAlert(ctx, v.u.ID, in)
			switch e, ok := formErrors(err); {
			case ok && errors.Is(err, tradekit.ErrNotFound):
				// The asset was just found: the webhook is what is gone.
				errs["webhookId"] = "That webhook no longer exists: choose another."
			case ok:
				errs = e
			case err != nil:
				h.fail(w, err)
				return
			}
		}
		if len(errs) > 0 {
			h.showAlerts(v, http.StatusBadRequest, page{Errors: errs, Form: form})
			return
		}
		back(v, "/dashboard/alerts", noticeAlertCreated)
	})
}

// conditionError returns the condition's parse error, nil when it parses.
func conditionError(cond string) error {
	_, err := alerts.ParseCondition(cond)
	return err
}

// alertData is an alert's page's.
type alertData struct {
	Alert   alerts.Alert
	Firings []alerts.Firing
	HookURL string // the alert's webhook's URL; "" for all the user's, or a deleted one
}

// alertPage shows an alert with its latest firings.
func (h *Handler) alertPage(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		a, fs, err := h.cfg.Alerts.Alert(r.Context(), v.u.ID, id, firingsShown)
		if !h.found(v, err) {
			return
		}
		d := alertData{Alert: a, Firings: fs}
		if a.WebhookID != nil {
			if d.HookURL, err = h.hookURL(v, *a.WebhookID); err != nil {
				h.fail(w, err)
				return
			}
		}
		h.show(v, http.StatusOK, "alerts-detail", a.Name, page{Notice: notice(r), Data: d})
	})
}

// deleteAlert deletes an alert.
func (h *Handler) deleteAlert(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, func(uuid.UUID) string { return "/dashboard/alerts" }, func(v visit, id uuid.UUID) (noticeCode, error) {
		return noticeAlertDeleted, h.cfg.Alerts.DeleteAlert(r.Context(), v.u.ID, id)
	})
}

// webhooksData is the webhooks page's.
type webhooksData struct {
	Webhooks []alerts.Webhook
	// New is the webhook just created, with its secret, shown once.
	New *alerts.Webhook
}

// webhooksPage lists the user's webhooks, with a form to add one.
func (h *Handler) webhooksPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showWebhooks(v, http.StatusOK, page{Notice: notice(r)}, nil)
	})
}

func (h *Handler) showWebhooks(v visit, status int, p page, created *alerts.Webhook) {
	hooks, err := h.cfg.Alerts.Webhooks(v.r.Context(), v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	p.Data = webhooksData{Webhooks: hooks, New: created}
	h.show(v, status, "webhooks", "Webhooks", p)
}

// createWebhook adds a webhook and shows its signing secret, this once.
func (h *Handler) createWebhook(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		u := strings.TrimSpace(r.PostFormValue("url"))
		wh, err := h.cfg.Alerts.CreateWebhook(r.Context(), v.u.ID, u)
		if errs, ok := formErrors(err); ok {
			h.showWebhooks(v, http.StatusBadRequest, page{Errors: errs, Form: map[string]string{"url": u}}, nil)
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		h.showWebhooks(v, http.StatusOK, page{}, &wh)
	})
}

// deleteWebhook deletes a webhook, cancelling its pending deliveries.
func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, func(uuid.UUID) string { return "/dashboard/webhooks" }, func(v visit, id uuid.UUID) (noticeCode, error) {
		return noticeWebhookDeleted,
			h.cfg.Alerts.DeleteWebhook(r.Context(), v.u.ID, id)
	})
}

// deliveriesData is a webhook's delivery log page's.
type deliveriesData struct {
	ID         uuid.UUID
	URL        string // "" once the webhook is deleted
	Deliveries []alerts.Delivery
	Total      int
	Page       int
	NextPage   int // 0 on the last page
}

// deliveriesPage shows a page of a webhook's delivery log, newest first.
func (h *Handler) deliveriesPage(w http.ResponseWriter, r *http.Request) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		d := deliveriesData{ID: id, Page: 1}
		if n, err := strconv.Atoi(r.URL.Query().Get("page")); err == nil && n > 1 && n <= 10000 {
			d.Page = n
		}
		var err error
		d.Deliveries, d.Total, err = h.cfg.Alerts.Deliveries(r.Context(), v.u.ID, id, d.Page, deliveriesPerPage)
		if !h.found(v, err) {
			return
		}
		if d.Page*deliveriesPerPage < d.Total {
			d.NextPage = d.Page + 1
		}
		if d.URL, err = h.hookURL(v, id); err != nil {
			h.fail(w, err)
			return
		}
		h.show(v, http.StatusOK, "webhooks-deliveries", "Webhook deliveries", page{Notice: notice(r), Data: d})
	})
}
