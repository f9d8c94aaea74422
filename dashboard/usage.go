package dashboard

import (
	"net/http"

	"github.com/tradekit/tradekit/billing"
)

// usageData is the usage page's.
type usageData struct {
	Plan  billing.Plan
	Usage billing.CurrentUsage
}

// usagePage shows the plan's limits beside this minute's and today's
// requests, as the rate limiter counted them.
func (h *Handler) usagePage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		st := billing.NewStore(h.db)
		plan, err := st.PlanOf(r.Context(), v.u.ID)
		if err != nil {
			h.fail(w, err)
			return
		}
		use, err := h.cfg.Usage(r.Context(), v.u.ID, h.cfg.Now())
		if err != nil {
			h.fail(w, err)
			return
		}
		h.show(v, http.StatusOK, "usage", "Usage and plan", page{Notice: notice(r), Data: usageData{Plan: plan, Usage: use}})
	})
}
