package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

// keysData is the API keys page's.
type keysData struct {
	Keys   []billing.AccountKey
	NewKey *newKey // the key just created, shown once
}

type newKey struct{ Name, Full string }

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showKeys(v, http.StatusOK, page{Notice: notice(r)}, nil)
	})
}

func (h *Handler) showKeys(v visit, status int, p page, nk *newKey) {
	keys, err := h.cfg.Billing.AccountKeys(v.r.Context(), v.u.AccountID)
	if err != nil {
		h.fail(v.w, err)
		return
	}
	p.Data = keysData{Keys: keys, NewKey: nk}
	h.show(v, status, "api-keys", "API keys", p)
}

// createKey creates a key of the signed-in administrator.
func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		if !v.u.IsAdmin {
			h.forbidden(w, "only account administrators can create API keys")
			return
		}
		name := strings.TrimSpace(r.PostFormValue("name"))
		form := map[string]string{"name": name}
		switch {
		case name == "":
			h.showKeys(v, http.StatusBadRequest, page{Form: form, Errors: map[string]string{"name": "Give the key a name, such as the server that will use it."}}, nil)
			return
		case len([]rune(name)) > 100:
			h.showKeys(v, http.StatusBadRequest, page{Form: form, Errors: map[string]string{"name": "At most 100 characters."}}, nil)
			return
		}
		k, full, err := h.cfg.Billing.CreateKey(r.Context(), v.u.ID, name, h.cfg.Now())
		if err != nil {
			h.fail(w, err)
			return
		}
		h.showKeys(v, http.StatusOK, page{}, &newKey{Name: k.Name, Full: full})
	})
}

// deleteKey revokes a key of the administrator's account.
func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		if !v.u.IsAdmin {
			h.forbidden(w, "only account administrators can delete API keys")
			return
		}
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		keys, err := h.cfg.Billing.AccountKeys(r.Context(), v.u.AccountID)
		if err != nil {
			h.fail(w, err)
			return
		}
		found := false
		for _, k := range keys {
			found = found || k.ID == id
		}
		if !found {
			http.NotFound(w, r)
			return
		}
		if err := h.cfg.Revoke(r.Context(), id); err != nil && !errors.Is(err, tradekit.ErrConflict) {
			h.fail(w, err)
			return
		}
		back(v, "/dashboard/settings/api-keys", noticeKeyDeleted)
	})
}
