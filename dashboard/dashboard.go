// Package dashboard is the account dashboard that `tradekit serve` serves
// under /dashboard/: sign-in with an email and password, and Settings →
// API keys, where account administrators create keys (shown once) and
// delete them, and other users see the list.
//
// It is server-rendered HTML (html/template, embedded), usable without
// JavaScript and on a phone. Sessions are billing sessions: the cookie
// tk_session holds a random token (HttpOnly, SameSite=Lax, Secure when
// the request came over TLS), the database its hash. Every form carries a
// CSRF token: the session's own once signed in, and before that a random
// token also set in the cookie tk_csrf (double submit), so that a form
// posted from another site is refused with 403. Failed sign-ins are
// throttled per email (billing.SignInThrottle).
package dashboard

import (
	"context"
	"crypto/subtle"
	"embed"
	"errors"
	"html/template"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/billing"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Config configures a [Handler]. The zero value gives the defaults, but
// for Revoke.
type Config struct {
	// Now is the clock of sessions and the throttle. Default time.Now.
	Now func() time.Time
	// SessionTTL is how long a session lasts. Default 12 hours.
	SessionTTL time.Duration
	// Passwords are the hash parameters new and upgraded hashes use.
	// Default billing.DefaultPasswordParams().
	Passwords billing.PasswordParams
	// Throttle bounds failed sign-ins. Default billing.DefaultSignInThrottle().
	Throttle billing.SignInThrottle
	// Revoke revokes a key, so that the API refuses it at once; the server
	// passes its Authenticator's. Default billing.Store.RevokeKey.
	Revoke func(ctx context.Context, id uuid.UUID) error
	// Logger receives errors. Default slog.Default().
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	db    bun.IDB
	cfg   Config
	pages map[string]*template.Template
	mux   *http.ServeMux
}

const (
	sessionCookie = "tk_session"
	csrfCookie    = "tk_csrf"
)

// New returns the dashboard on db.
func New(db bun.IDB, cfg Config) *Handler {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.Passwords == (billing.PasswordParams{}) {
		cfg.Passwords = billing.DefaultPasswordParams()
	}
	if cfg.Throttle.Failures <= 0 {
		cfg.Throttle = billing.DefaultSignInThrottle()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Revoke == nil {
		cfg.Revoke = func(ctx context.Context, id uuid.UUID) error {
			_, err := billing.NewStore(db).RevokeKey(ctx, id, cfg.Now())
			return err
		}
	}
	h := &Handler{db: db, cfg: cfg, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	funcs := template.FuncMap{"date": func(t any) string {
		switch t := t.(type) {
		case time.Time:
			return t.UTC().Format("2006-01-02 15:04 UTC")
		case *time.Time:
			return t.UTC().Format("2006-01-02 15:04 UTC")
		}
		return ""
	}}
	for _, p := range []string{"sign-in", "api-keys"} {
		h.pages[p] = template.Must(template.New(p+".html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+p+".html"))
	}
	h.mux.HandleFunc("GET /dashboard/{$}", h.home)
	h.mux.HandleFunc("GET /dashboard/sign-in", h.signInPage)
	h.mux.HandleFunc("POST /dashboard/sign-in", h.signIn)
	h.mux.HandleFunc("POST /dashboard/sign-out", h.signOut)
	h.mux.HandleFunc("GET /dashboard/settings/api-keys", h.keysPage)
	h.mux.HandleFunc("POST /dashboard/settings/api-keys", h.createKey)
	h.mux.HandleFunc("POST /dashboard/settings/api-keys/{id}/delete", h.deleteKey)
	return h
}

// ServeHTTP implements [http.Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin")
	h.mux.ServeHTTP(w, r)
}

// page is what a template renders.
type page struct {
	Title  string
	User   *billing.User
	CSRF   string
	Errors map[string]string
	Email  string // sign-in: the email given
	Name   string // api-keys: the key name given
	Keys   []billing.APIKey
	NewKey *newKey
}

type newKey struct{ Name, Full string }

func (h *Handler) render(w http.ResponseWriter, status int, name string, p page) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := h.pages[name].ExecuteTemplate(w, name+".html", p); err != nil {
		h.cfg.Logger.Error("dashboard: render", "page", name, "err", err)
	}
}

// secure reports whether the request came over TLS, directly or through a
// proxy that says so.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: "/dashboard/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
}

// session returns the request's session and user, or ok false.
func (h *Handler) session(r *http.Request) (billing.Session, billing.User, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return billing.Session{}, billing.User{}, false
	}
	se, u, err := billing.NewStore(h.db).Session(r.Context(), c.Value, h.cfg.Now())
	if err != nil {
		if !errors.Is(err, tradekit.ErrUnauthorized) {
			h.cfg.Logger.Error("dashboard: session", "err", err)
		}
		return billing.Session{}, billing.User{}, false
	}
	return se, u, true
}

// sameToken compares two tokens in constant time; empty never matches.
func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := h.session(r); ok {
		http.Redirect(w, r, "/dashboard/settings/api-keys", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
}

// signInPage shows the form with a fresh pre-session CSRF token.
func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := h.session(r); ok {
		http.Redirect(w, r, "/dashboard/settings/api-keys", http.StatusSeeOther)
		return
	}
	h.renderSignIn(w, r, http.StatusOK, "", nil)
}

func (h *Handler) renderSignIn(w http.ResponseWriter, r *http.Request, status int, email string, errs map[string]string) {
	token, err := billing.RandomToken()
	if err != nil {
		h.fail(w, err)
		return
	}
	h.setCookie(w, r, csrfCookie, token, 3600)
	h.render(w, status, "sign-in", page{Title: "Sign in", CSRF: token, Email: email, Errors: errs})
}

func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !sameToken(c.Value, r.PostFormValue("csrf")) {
		h.forbidden(w, "the form's security token is missing or stale: reload the page and sign in again")
		return
	}
	email, password := strings.TrimSpace(r.PostFormValue("email")), r.PostFormValue("password")
	errs := map[string]string{}
	if !strings.Contains(email, "@") {
		errs["email"] = "Give the email address of your account."
	}
	if password == "" {
		errs["password"] = "Give your password."
	}
	if len(errs) > 0 {
		h.renderSignIn(w, r, http.StatusBadRequest, email, errs)
		return
	}
	ctx, st, now := r.Context(), billing.NewStore(h.db), h.cfg.Now()
	limited, until, err := st.SignInThrottled(ctx, email, now, h.cfg.Throttle)
	if err != nil {
		h.fail(w, err)
		return
	}
	if limited {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(until.Sub(now).Seconds()))))
		h.renderSignIn(w, r, http.StatusTooManyRequests, email, map[string]string{
			"form": "Too many failed sign-ins for this email. Try again after " + until.UTC().Format("15:04 UTC") + "."})
		return
	}
	u, err := st.SignIn(ctx, email, password, h.cfg.Passwords)
	if errors.Is(err, tradekit.ErrUnauthorized) {
		if err := st.RecordSignInFailure(ctx, email, now); err != nil {
			h.fail(w, err)
			return
		}
		h.renderSignIn(w, r, http.StatusUnauthorized, email, map[string]string{"form": "Wrong email or password."})
		return
	}
	if err != nil {
		h.fail(w, err)
		return
	}
	token, _, err := st.CreateSession(ctx, u.ID, now, h.cfg.SessionTTL)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.setCookie(w, r, sessionCookie, token, int(h.cfg.SessionTTL.Seconds()))
	h.setCookie(w, r, csrfCookie, "", -1)
	http.Redirect(w, r, "/dashboard/settings/api-keys", http.StatusSeeOther)
}

// withSession runs fn for a signed-in request whose form, for a POST,
// carries the session's CSRF token; otherwise it sends GETs to the sign-in
// page and refuses POSTs.
func (h *Handler) withSession(w http.ResponseWriter, r *http.Request, fn func(billing.Session, billing.User)) {
	se, u, ok := h.session(r)
	switch {
	case !ok && r.Method == http.MethodGet:
		http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	case !ok:
		h.forbidden(w, "you are not signed in, or your session expired: sign in again")
	case r.Method == http.MethodPost && !sameToken(se.CSRFToken, r.PostFormValue("csrf")):
		h.forbidden(w, "the form's security token is missing or stale: reload the page and try again")
	default:
		fn(se, u)
	}
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(billing.Session, billing.User) {
		if c, err := r.Cookie(sessionCookie); err == nil {
			if err := billing.NewStore(h.db).DeleteSession(r.Context(), c.Value); err != nil {
				h.fail(w, err)
				return
			}
		}
		h.setCookie(w, r, sessionCookie, "", -1)
		http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	})
}

func (h *Handler) keysPage(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(se billing.Session, u billing.User) {
		h.renderKeys(w, r, http.StatusOK, se, u, page{})
	})
}

func (h *Handler) renderKeys(w http.ResponseWriter, r *http.Request, status int, se billing.Session, u billing.User, p page) {
	keys, err := billing.NewStore(h.db).Keys(r.Context(), u.ID)
	if err != nil {
		h.fail(w, err)
		return
	}
	p.Title, p.User, p.CSRF, p.Keys = "API keys", &u, se.CSRFToken, keys
	h.render(w, status, "api-keys", p)
}

func (h *Handler) createKey(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(se billing.Session, u billing.User) {
		if !u.IsAdmin {
			h.forbidden(w, "only account administrators can create API keys")
			return
		}
		name := strings.TrimSpace(r.PostFormValue("name"))
		switch {
		case name == "":
			h.renderKeys(w, r, http.StatusBadRequest, se, u, page{Errors: map[string]string{"name": "Give the key a name, such as the server that will use it."}})
			return
		case len([]rune(name)) > 100:
			h.renderKeys(w, r, http.StatusBadRequest, se, u, page{Name: name, Errors: map[string]string{"name": "At most 100 characters."}})
			return
		}
		k, full, err := billing.NewStore(h.db).CreateKey(r.Context(), u.ID, name, h.cfg.Now())
		if err != nil {
			h.fail(w, err)
			return
		}
		h.renderKeys(w, r, http.StatusOK, se, u, page{NewKey: &newKey{Name: k.Name, Full: full}})
	})
}

func (h *Handler) deleteKey(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(se billing.Session, u billing.User) {
		if !u.IsAdmin {
			h.forbidden(w, "only account administrators can delete API keys")
			return
		}
		id, err := uuid.Parse(r.PathValue("id"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		keys, err := billing.NewStore(h.db).Keys(r.Context(), u.ID)
		if err != nil {
			h.fail(w, err)
			return
		}
		owned := false
		for _, k := range keys {
			owned = owned || k.ID == id
		}
		if !owned {
			http.NotFound(w, r)
			return
		}
		if err := h.cfg.Revoke(r.Context(), id); err != nil && !errors.Is(err, tradekit.ErrConflict) {
			h.fail(w, err)
			return
		}
		http.Redirect(w, r, "/dashboard/settings/api-keys", http.StatusSeeOther)
	})
}

func (h *Handler) forbidden(w http.ResponseWriter, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusForbidden)
	w.Write([]byte("Forbidden: " + msg + "\n"))
}

func (h *Handler) fail(w http.ResponseWriter, err error) {
	h.cfg.Logger.Error("dashboard", "err", err)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write([]byte("Something went wrong; the server's log has the details.\n"))
}
