package dashboard

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
)

// leadersPerPage is the leaderboard's page size.
const leadersPerPage = 20

// copyData is the copy-trading page's.
type copyData struct {
	Leaders    []copytrading.Leader
	SortBy     string
	SortOrders []string
	Page       int
	NextPage   int // 0 on the last page
	Following  []copytrading.FollowView
	// Followed holds the leaders the user follows.
	Followed      map[uuid.UUID]bool
	Connections   []connect.Connection // active ones, for a follow's controls
	Notifications []copytrading.Notification
	Unread        int
	// ErrorFollow is the follow whose form Errors are about.
	ErrorFollow uuid.UUID
}

// copyPage shows the leaderboard, the user's follows with their
// controls, and their notifications.
func (h *Handler) copyPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showCopy(v, http.StatusOK, page{Notice: notice(r)}, uuid.Nil)
	})
}

func (h *Handler) showCopy(v visit, status int, p page, errorFollow uuid.UUID) {
	ctx, q := v.r.Context(), v.r.URL.Query()
	d := copyData{SortBy: q.Get("sortBy"), SortOrders: copytrading.SortOrders(), Page: 1,
		Followed: map[uuid.UUID]bool{}, ErrorFollow: errorFollow}
	if !slices.Contains(d.SortOrders, d.SortBy) {
		d.SortBy = copytrading.SortTotalReturn
	}
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 && n <= 10000 {
		d.Page = n
	}
	var total int
	var err error
	if d.Leaders, total, err = h.cfg.Copy.Leaders(ctx, copytrading.LeaderFilter{SortBy: d.SortBy, Page: d.Page, Limit: leadersPerPage}); err != nil {
		h.fail(v.w, err)
		return
	}
	if d.Page*leadersPerPage < total {
		d.NextPage = d.Page + 1
	}
	if d.Following, err = h.cfg.Copy.Following(ctx, v.u.ID); err != nil {
		h.fail(v.w, err)
		return
	}
	for _, f := range d.Following {
		d.Followed[f.LeaderProfileID] = true
	}
	conns, err := h.cfg.Trading.Connections(ctx, v.u.ID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	for _, c := range conns {
		if c.Status == connect.Active {
			d.Connections = append(d.Connections, c)
		}
	}
	if d.Notifications, _, err = h.cfg.Copy.NotificationsOfKinds(ctx, v.u.ID, copytrading.Kinds(), false, 1, notificationsShown); err != nil {
		h.fail(v.w, err)
		return
	}
	for _, n := range d.Notifications {
		if n.ReadAt == nil {
			d.Unread++
		}
	}
	p.Data = d
	h.show(v, status, "copy-trading", "Copy trading", p)
}

// follow follows a leader, with auto-sync off: the user turns it on with
// the follow's controls.
func (h *Handler) follow(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		id, err := uuid.Parse(r.PostFormValue("leaderProfileId"))
		if err != nil {
			h.showCopy(v, http.StatusBadRequest, page{Errors: map[string]string{"form": "Choose a leader to follow."}}, uuid.Nil)
			return
		}
		_, err = h.cfg.Copy.Follow(r.Context(), v.u.ID, copytrading.FollowInput{LeaderProfileID: id, Notifications: true})
		if errs, ok := formErrors(err); ok {
			h.showCopy(v, http.StatusBadRequest, page{Errors: errs}, uuid.Nil)
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		back(v, "/dashboard/copy-trading", noticeFollowing)
	})
}

// updateFollow saves a follow's form: auto-sync, notifications and the
// copy controls.
func (h *Handler) updateFollow(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		autoSync, notify := r.PostFormValue("autoSync") == "on", r.PostFormValue("notifications") == "on"
		p := copytrading.FollowPatch{AutoSync: &autoSync, Notifications: &notify}
		errs := map[string]string{}
		if v := r.PostFormValue("connectionId"); v != "" {
			cid, err := uuid.Parse(v)
			if err != nil {
				errs["connectionId"] = "Choose one of your connections."
			}
			p.Controls.ConnectionID = &cid
		}
		for _, c := range []struct {
			name string
			to   **decimal.Decimal
		}{{"allocationPct", &p.Controls.AllocationPct}, {"scalingPct", &p.Controls.ScalingPct},
			{"maxPositionPct", &p.Controls.MaxPositionPct}, {"copyStopLossPct", &p.Controls.CopyStopLossPct}} {
			s := strings.TrimSpace(r.PostFormValue(c.name))
			if s == "" {
				continue
			}
			d, err := decimal.NewFromString(s)
			if err != nil {
				errs[c.name] = "Give a number, such as 25 or 12.5."
				continue
			}
			*c.to = &d
		}
		if len(errs) == 0 {
			_, err = h.cfg.Copy.UpdateFollow(r.Context(), v.u.ID, id, p)
			var ok bool
			if errs, ok = formErrors(err); !ok && err != nil {
				h.fail(w, err)
				return
			}
		}
		if len(errs) > 0 {
			h.showCopy(v, http.StatusBadRequest, page{Errors: errs}, id)
			return
		}
		back(v, "/dashboard/copy-trading", noticeFollowSaved)
	})
}

// notificationsShown is how many of the latest notifications the Copy
// trading and Alerts pages show, each of its own kinds.
const notificationsShown = 20

// copyPath is where the copy-trading page's buttons return.
func copyPath(uuid.UUID) string { return "/dashboard/copy-trading" }

// unfollow ends a follow.
func (h *Handler) unfollow(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, copyPath, func(v visit, id uuid.UUID) (noticeCode, error) {
		_, err := h.cfg.Copy.Unfollow(r.Context(), v.u.ID, id)
		return noticeUnfollowed, err
	})
}

// markRead marks a notification read.
func (h *Handler) markRead(w http.ResponseWriter, r *http.Request) {
	h.action(w, r, copyPath, func(v visit, id uuid.UUID) (noticeCode, error) {
		_, err := h.cfg.Copy.MarkRead(r.Context(), v.u.ID, id)
		return noticeNone, err
	})
}
