package dashboard

import (
	"errors"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

// membersData is the members page's.
type membersData struct {
	Members []billing.User
	// Invited and Link are the member just invited and their link, shown
	// once.
	Invited, Link string
}

func (h *Handler) membersPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		h.showMembers(v, http.StatusOK, page{Notice: notice(r)}, membersData{})
	})
}

func (h *Handler) showMembers(v visit, status int, p page, d membersData) {
	var err error
	if d.Members, err = h.cfg.Billing.Members(v.r.Context(), v.u.AccountID); err != nil {
		h.fail(v.w, err)
		return
	}
	p.Data = d
	h.show(v, status, "members", "Members", p)
}

// inviteMember adds a user to the administrator's account and shows the
// link with which they set a password.
func (h *Handler) inviteMember(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		if !v.u.IsAdmin {
			h.forbidden(w, "only account administrators can add members")
			return
		}
		email, name := strings.TrimSpace(r.PostFormValue("email")), strings.TrimSpace(r.PostFormValue("name"))
		admin := r.PostFormValue("admin") == "on"
		form := map[string]string{"email": email, "name": name}
		if admin {
			form["admin"] = "on"
		}
		errs := map[string]string{}
		if !strings.Contains(email, "@") || len(email) > 254 {
			errs["email"] = "Give the new member's email address."
		}
		if len([]rune(name)) > 100 {
			errs["name"] = "At most 100 characters."
		}
		if len(errs) > 0 {
			h.showMembers(v, http.StatusBadRequest, page{Form: form, Errors: errs}, membersData{})
			return
		}
		if name == "" {
			name = strings.Split(email, "@")[0]
		}
		u := billing.User{Email: email, Name: name, IsAdmin: admin}
		token, err := h.cfg.Billing.Invite(r.Context(), v.u, &u, h.cfg.Now(), h.cfg.InviteTTL)
		if errors.Is(err, tradekit.ErrConflict) {
			h.showMembers(v, http.StatusConflict, page{Form: form, Errors: map[string]string{"email": "A user with this email exists already."}}, membersData{})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		h.showMembers(v, http.StatusOK, page{}, membersData{Invited: u.Email, Link: h.inviteLink(r, token)})
	})
}

// reinviteMember replaces the invitation of a member who has not set a
// password yet.
func (h *Handler) reinviteMember(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(v visit) {
		if !v.u.IsAdmin {
			h.forbidden(w, "only account administrators can invite members")
			return
		}
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		st := h.cfg.Billing
		token, err := st.Reinvite(r.Context(), v.u, id, h.cfg.Now(), h.cfg.InviteTTL)
		if errs, ok := formErrors(err); ok {
			h.showMembers(v, http.StatusConflict, page{Errors: errs}, membersData{})
			return
		}
		if err != nil {
			h.fail(w, err)
			return
		}
		members, err := st.Members(r.Context(), v.u.AccountID)
		if err != nil {
			h.fail(w, err)
			return
		}
		var email string
		for _, m := range members {
			if m.ID == id {
				email = m.Email
			}
		}
		h.showMembers(v, http.StatusOK, page{}, membersData{Invited: email, Link: h.inviteLink(r, token)})
	})
}

func (h *Handler) inviteLink(r *http.Request, token string) string {
	return h.baseURL(r) + "/dashboard/invite/" + token
}

// invitePage asks an invited user for a password.
func (h *Handler) invitePage(w http.ResponseWriter, r *http.Request) {
	u, err := h.cfg.Billing.Invited(r.Context(), r.PathValue("token"), h.cfg.Now())
	if err != nil {
		h.badInvite(w, r, err)
		return
	}
	h.renderInvite(w, r, http.StatusOK, u, nil)
}

func (h *Handler) renderInvite(w http.ResponseWriter, r *http.Request, status int, u billing.User, errs map[string]string) {
	token, err := billing.RandomToken()
	if err != nil {
		h.fail(w, err)
		return
	}
	h.setCookie(w, r, csrfCookie, token, 3600)
	h.render(w, status, "invite", page{Title: "Set your password", CSRF: token, Errors: errs, Data: u})
}

// badInvite answers a link that is not (or no longer) an invitation.
func (h *Handler) badInvite(w http.ResponseWriter, r *http.Request, err error) {
	if !errors.Is(err, tradekit.ErrNotFound) {
		h.fail(w, err)
		return
	}
	h.render(w, http.StatusNotFound, "invite", page{Title: "Invitation expired", Errors: map[string]string{
		"form": "This invitation link has expired or was used already. Ask an administrator of your account for a new one."}})
}

// acceptInvite sets the invited user's password and signs them in.
func (h *Handler) acceptInvite(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !sameToken(c.Value, r.PostFormValue("csrf")) {
		h.forbidden(w, "the form's security token is missing or stale: reload the page and try again")
		return
	}
	token, st := r.PathValue("token"), h.cfg.Billing
	u, err := st.Invited(r.Context(), token, h.cfg.Now())
	if err != nil {
		h.badInvite(w, r, err)
		return
	}
	pw := r.PostFormValue("password")
	if errs, ok := formErrors(billing.CheckPasswordRules(pw)); ok {
		h.renderInvite(w, r, http.StatusBadRequest, u, errs)
		return
	}
	if pw != r.PostFormValue("confirm") {
		h.renderInvite(w, r, http.StatusBadRequest, u, map[string]string{"confirm": "The two passwords differ."})
		return
	}
	hash, err := billing.HashPassword(pw, h.cfg.Passwords)
	if errors.Is(err, billing.ErrPasswordBusy) {
		h.busy(w)
		h.renderInvite(w, r, http.StatusServiceUnavailable, u, map[string]string{"form": busyMessage})
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	if u, err = st.AcceptInvite(r.Context(), token, hash, h.cfg.Now()); err != nil {
		h.badInvite(w, r, err)
		return
	}
	h.startSession(w, r, u)
}
