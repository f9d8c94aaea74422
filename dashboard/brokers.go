package dashboard

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/brokers/connect"
)

// brokersData is the brokers page's.
type brokersData struct {
	Providers   []string
	Connections []connect.Connection
}

// brokersPage lists the user's connections, with the result of an
// authorization the broker just sent the user back from.
func (h *Handler) brokersPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		p := page{Notice: notice(r)}
		q := r.URL.Query()
		switch {
		case q.Get("error") != "":
			// The reason is the connection's, as stored, never the
			// URL's text, which anyone could have written.
			msg := "The broker did not connect."
			if id, err := uuid.Parse(q.Get("connectionId")); err == nil {
				list, err := h.cfg.Trading.Connections(r.Context(), v.u.ID)
				if err != nil {
					h.fail(w, err)
					return
				}
				for _, c := range list {
					if c.ID == id && c.LastError != "" {
						msg = "The broker did not connect: " + c.LastError
					}
				}
			}
			p.Errors = map[string]string{"form": msg}
		case q.Get("status") == connect.Active:
			p.Notice = "Connected. The first sync has started; its result shows below in a moment."
		}
		h.showBrokers(v, http.StatusOK, p)
	})
}

func (h *Handler) showBrokers(v visit, status int, p page) {
	list, err := h.cfg.Trading.Connections(v.r.Context(), v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	p.Data = brokersData{Providers: h.cfg.Brokers.Providers(), Connections: list}
	h.show(v, status, "brokers", "Brokers", p)
}

// connectBroker starts a connection and sends the user to the broker to
// authorize it; the broker sends them back to the brokers page.
func (h *Handler) connectBroker(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		provider := r.PostFormValue("provider")
		_, authURL, err := h.cfg.Brokers.Connect(r.Context(), v.u.ID, provider, h.baseURL(r)+"/dashboard/brokers")
		if errs, ok := formErrors(err); ok {
			h.showBrokers(v, http.StatusBadRequest, page{Errors: errs, Form: map[string]string{"provider": provider}})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		http.Redirect(w, r, authURL, http.StatusSeeOther)
	})
}

// connectionData is a connection's page's.
type connectionData struct {
	Connection connect.Connection
	Portfolio  *connect.Portfolio // nil before the first sync
	Logs       []connect.SyncLog
	// PaperKeys shows the button to the paper broker's account page.
	PaperKeys bool
}

// connectionPage shows a connection's portfolio and sync log.
func (h *Handler) connectionPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		ctx, st := r.Context(), h.cfg.Trading
		var d connectionData
		if d.Connection, err = st.Connection(ctx, v.u.ID, id); err != nil {
			if _, ok := formErrors(err); ok {
				http.NotFound(w, r)
			} else {
				h.fail(w, err)
			}
			return
		}
		if d.Logs, err = st.Logs(ctx, v.u.ID, id); err != nil {
			h.fail(w, err)
			return
		}
		ps, err := st.Portfolios(ctx, v.u.ID)
		if err != nil {
			h.fail(w, err)
			return
		}
		for _, p := range ps {
			if p.ConnectionID == id {
				full, err := st.Portfolio(ctx, v.u.ID, p.ID)
				if err != nil {
					h.fail(w, err)
					return
				}
				d.Portfolio = &full
			}
		}
		d.PaperKeys = h.cfg.PaperSignIn != nil && isPaper(d.Connection)
		title := d.Connection.Provider
		if d.Connection.AccountName != "" {
			title += " " + d.Connection.AccountName
		}
		h.show(v, http.StatusOK, "connection", title, page{Notice: notice(r), Data: d})
	})
}

// syncConnection starts a sync of a connection.
func (h *Handler) syncConnection(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, brokerPath(r), func(v visit, id uuid.UUID) (noticeCode, error) {
		_, err := h.cfg.Brokers.StartSync(r.Context(), v.u.ID, id)
		return noticeSyncStarted, err
	})
}

// disconnect ends a connection, keeping its history.
func (h *Handler) disconnect(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, brokerPath(r), func(v visit, id uuid.UUID) (noticeCode, error) {
		_, err := h.cfg.Brokers.Disconnect(r.Context(), v.u.ID, id)
		return noticeDisconnected, err
	})
}

// brokerPath is where a connection's buttons return: the connection's
// page when the form says so, else the list.
func brokerPath(r *http.Request) func(uuid.UUID) string {
	return func(id uuid.UUID) string {
		if r.PostFormValue("return") == "connection" {
			return "/dashboard/brokers/" + id.String()
		}
		return "/dashboard/brokers"
	}
}

// isPaper reports whether c is an active connection to the built-in paper
// broker.
func isPaper(c connect.Connection) bool {
	return c.Provider == "paper" && c.Status == connect.Active && c.AccountID != ""
}

// paperAccount sends the user to the paper broker's account page of an
// active paper connection, signed in by a single-use link: there they
// create and revoke the account's API keys.
func (h *Handler) paperAccount(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		c, err := h.cfg.Trading.Connection(r.Context(), v.u.ID, id)
		if _, ok := formErrors(err); ok {
			http.NotFound(w, r)
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		if !isPaper(c) {
			back(v, "/dashboard/brokers/"+id.String(), noticePaperOnly)
			return
		}
		link, err := h.cfg.PaperSignIn(w, r, c.AccountID)
		if err != nil {
			h.fail(w, err)
			return
		}
		http.Redirect(w, r, link, http.StatusSeeOther)
	})
}
