package dashboard

import (
	"net/http"

	"github.com/tradekit/tradekit/billing"
)

// usageData is the usage page's.
type usageData struct {
	Plan  billing.Plan
	Usage billing.CurrentUsage
	// Connections is the account's active broker connections, all its
	// members', which count against the plan's portfolios; -1 without the
	// broker pages.
	Connections int
	// Watchlists and Alerts are the account's watchlists and alerts, all
	// its members', which count against the plan's limits of those names;
	// -1 without the alerts pages.
	Watchlists, Alerts int
}

// usagePage shows the plan's limits beside this minute's and today's
// requests of the whole account, as the rate limiter counted them.
func (h *Handler) usagePage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		st := h.cfg.Billing
		plan, err := st.PlanOf(r.Context(), v.u.ID)
		if err != nil {
			h.fail(w, err)
			return
		}
		use, err := h.cfg.Usage(r.Context(), v.u.AccountID, h.cfg.Now())
		if err != nil {
			h.fail(w, err)
			return
		}
		d := usageData{Plan: plan, Usage: use, Connections: -1, Watchlists: -1, Alerts: -1}
		if h.cfg.Alerts != nil {
			if d.Watchlists, d.Alerts, err = h.cfg.Alerts.Held(r.Context(), v.u.ID); err != nil {
				h.fail(w, err)
				return
			}
		}
		if h.cfg.Brokers != nil {
			_, members, err := st.AccountOf(r.Context(), v.u.ID)
			if err != nil {
				h.fail(w, err)
				return
			}
			if d.Connections, err = h.cfg.Trading.CountActiveOf(r.Context(), members); err != nil {
				h.fail(w, err)
				return
			}
		}
		h.show(v, http.StatusOK, "usage", "Usage and plan", page{Notice: notice(r), Data: d})
	})
}
