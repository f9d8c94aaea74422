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
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/alerts"
	"github.com/tradekit/tradekit/billing"
	"github.com/tradekit/tradekit/brokers/connect"
	"github.com/tradekit/tradekit/copytrading"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/studies"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Config configures a [Handler]. The dashboard runs no SQL and builds no
// store or service: it is given those its pages use, which server.New
// builds once for the API and the dashboard alike. Billing is required;
// the broker, orders and guardrails pages need Brokers, Trading and
// Status, the copy-trading pages Copy and Trading, and the watchlist,
// alert and webhook pages Alerts, Studies and Market. The other fields'
// zero values give the defaults.
type Config struct {
	// Billing is the store of accounts, users, sessions, invitations,
	// API keys and plans. Required.
	Billing *billing.Store
	// Trading is the store of broker connections and orders that the
	// broker, orders, usage and copy-trading pages read. Required with
	// Brokers or Copy.
	Trading *connect.Store
	// Market finds the assets that watchlists and alerts name. Required
	// with Alerts.
	Market *marketdata.Store
	// Status returns the HTTP status of a page that shows why a request
	// was refused with err: the API's status for err's kind, which the
	// server passes from its one mapping of kinds to statuses
	// (server/errors.go). Required with Brokers.
	Status func(err error) int
	// Now is the clock of sessions, invitations and the throttle. Default
	// time.Now.
	Now func() time.Time
	// SessionTTL is how long a session lasts. Default 12 hours.
	SessionTTL time.Duration
	// InviteTTL is how long an invitation link works. Default 7 days.
	InviteTTL time.Duration
	// Passwords are the hash parameters new and upgraded hashes use.
	// Default billing.DefaultPasswordParams().
	Passwords billing.PasswordParams
	// Throttle bounds failed sign-ins. Default billing.DefaultSignInThrottle().
	Throttle billing.SignInThrottle
	// Revoke revokes a key, so that the API refuses it at once; the server
	// passes its Authenticator's. Default Billing's RevokeKey.
	Revoke func(ctx context.Context, id uuid.UUID) error
	// Usage reads an account's requests counted this minute and today;
	// the server passes its Limiter's. Default Billing's Usage.
	Usage func(ctx context.Context, accountID uuid.UUID, now time.Time) (billing.CurrentUsage, error)
	// PublicURL is the server's public base URL, such as
	// https://tradekit.example.com: invitation links and the brokers'
	// return address start with it. Default the request's own scheme and
	// host.
	PublicURL string
	// Brokers serves the broker, orders and guardrails pages; nil leaves
	// them out.
	Brokers *connect.Service
	// PaperSignIn returns a link that signs the browser of the request in
	// to the paper broker's page of the paper account with the broker's
	// id, where its holder manages the account's API keys, and binds the
	// link to that browser with a cookie it sets on the response; the
	// server passes its paper portal's SignInLink (package brokers/paper/portal). nil
	// leaves the button out.
	PaperSignIn func(w http.ResponseWriter, r *http.Request, accountID string) (string, error)
	// Copy serves the copy-trading pages; nil leaves them out.
	Copy *copytrading.Service
	// Alerts serves the watchlist, alert and webhook pages; nil leaves
	// them out.
	Alerts *alerts.Service
	// Studies computes the indicator summaries of watchlists. Required
	// with Alerts.
	Studies *studies.Service
	// Logger receives errors. Default slog.Default().
	Logger *slog.Logger
}

// Handler serves the dashboard.
type Handler struct {
	cfg   Config
	pages map[string]*template.Template
	mux   *http.ServeMux
}

const (
	sessionCookie = "tk_session"
	csrfCookie    = "tk_csrf"
)

// New returns the dashboard with the stores and services of cfg. It
// panics when cfg lacks one that its pages require (see [Config]): that
// is a mistake in the caller's code.
func New(cfg Config) *Handler {
	cfg.require()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SessionTTL <= 0 {
		cfg.SessionTTL = 12 * time.Hour
	}
	if cfg.InviteTTL <= 0 {
		cfg.InviteTTL = 7 * 24 * time.Hour
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
			_, err := cfg.Billing.RevokeKey(ctx, id, cfg.Now())
			return err
		}
	}
	if cfg.Usage == nil {
		cfg.Usage = cfg.Billing.Usage
	}
	h := &Handler{cfg: cfg, pages: map[string]*template.Template{}, mux: http.NewServeMux()}
	for _, p := range []string{"sign-in", "invite", "usage", "api-keys", "members", "brokers", "connection", "orders", "guardrails", "copy-trading", "error"} {
		h.pages[p] = template.Must(template.New(p+".html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/"+p+".html"))
	}
	h.mux.HandleFunc("GET /dashboard/{$}", h.home)
	h.mux.HandleFunc("GET /dashboard/sign-in", h.signInPage)
	h.mux.HandleFunc("POST /dashboard/sign-in", h.signIn)
	h.mux.HandleFunc("POST /dashboard/sign-out", h.signOut)
	h.mux.HandleFunc("GET /dashboard/invite/{token}", h.invitePage)
	h.mux.HandleFunc("POST /dashboard/invite/{token}", h.acceptInvite)
	h.mux.HandleFunc("GET /dashboard/usage", h.usagePage)
	h.mux.HandleFunc("GET /dashboard/settings/api-keys", h.keysPage)
	h.mux.HandleFunc("POST /dashboard/settings/api-keys", h.createKey)
	h.mux.HandleFunc("POST /dashboard/settings/api-keys/{id}/delete", h.deleteKey)
	h.mux.HandleFunc("GET /dashboard/settings/members", h.membersPage)
	h.mux.HandleFunc("POST /dashboard/settings/members", h.inviteMember)
	h.mux.HandleFunc("POST /dashboard/settings/members/{id}/invite", h.reinviteMember)
	if cfg.Brokers != nil {
		h.mux.HandleFunc("GET /dashboard/brokers", h.brokersPage)
		h.mux.HandleFunc("POST /dashboard/brokers", h.connectBroker)
		h.mux.HandleFunc("GET /dashboard/brokers/{id}", h.connectionPage)
		h.mux.HandleFunc("POST /dashboard/brokers/{id}/sync", h.syncConnection)
		h.mux.HandleFunc("POST /dashboard/brokers/{id}/disconnect", h.disconnect)
		if cfg.PaperSignIn != nil {
			h.mux.HandleFunc("POST /dashboard/brokers/{id}/paper-account", h.paperAccount)
		}
		h.mux.HandleFunc("GET /dashboard/orders", h.ordersPage)
		h.mux.HandleFunc("POST /dashboard/orders/{id}/cancel", h.cancelOrder)
		h.mux.HandleFunc("GET /dashboard/guardrails", h.guardrailsPage)
		h.mux.HandleFunc("POST /dashboard/guardrails", h.saveGuardrails)
	}
	if cfg.Copy != nil {
		h.mux.HandleFunc("GET /dashboard/copy-trading", h.copyPage)
		h.mux.HandleFunc("POST /dashboard/copy-trading/follow", h.follow)
		h.mux.HandleFunc("POST /dashboard/copy-trading/follows/{id}", h.updateFollow)
		h.mux.HandleFunc("POST /dashboard/copy-trading/follows/{id}/unfollow", h.unfollow)
		h.mux.HandleFunc("POST /dashboard/copy-trading/notifications/{id}/read", h.markRead)
	}
	h.alertRoutes()
	return h
}

// require panics when cfg lacks a store or service that the pages it
// enables need.
func (cfg Config) require() {
	missing := func(field, pages string) {
		panic("dashboard: Config." + field + " is nil; " + pages + " need it")
	}
	switch {
	case cfg.Billing == nil:
		missing("Billing", "all pages")
	case cfg.Brokers != nil && cfg.Trading == nil:
		missing("Trading", "the broker and orders pages")
	case cfg.Brokers != nil && cfg.Status == nil:
		missing("Status", "the orders pages")
	case cfg.Copy != nil && cfg.Trading == nil:
		missing("Trading", "the copy-trading pages")
	case cfg.Alerts != nil && cfg.Studies == nil:
		missing("Studies", "the watchlist pages")
	case cfg.Alerts != nil && cfg.Market == nil:
		missing("Market", "the watchlist and alert pages")
	}
}

// ServeHTTP implements [http.Handler].
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// render replaces this policy with one allowing its page's nonce.
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy(""))
	if !h.readForm(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// page is what a template renders: the layout's fields and the page's
// own Data.
type page struct {
	Title string
	User  *billing.User
	CSRF  string
	// Brokers and Copy report whether those pages exist, for the menu;
	// Brokers also stands for the orders and guardrails pages.
	Brokers, Copy bool
	// Alerts reports whether the watchlist, alert and webhook pages exist.
	Alerts bool
	// Notice is a status line for the top of the page.
	Notice string
	// Errors maps a form field's name, or "form" for the whole form, to
	// what is wrong with it.
	Errors map[string]string
	// Form holds the values a form was posted with, to fill it again.
	Form map[string]string
	// Nonce is this response's CSP nonce: every inline <script> and
	// <style> element carries it, and the Content-Security-Policy header
	// allows no other.
	Nonce string
	Data  any
}

// render writes the page name with the status, under a
// Content-Security-Policy with a nonce of its own.
func (h *Handler) render(w http.ResponseWriter, status int, name string, p page) {
	for k, v := range p.Form {
		p.Form[k] = refill(v)
	}
	p.Brokers, p.Copy = h.cfg.Brokers != nil, h.cfg.Copy != nil
	p.Alerts = h.cfg.Alerts != nil
	p.Nonce = newNonce()
	w.Header().Set("Content-Security-Policy", contentSecurityPolicy(p.Nonce))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := h.pages[name].ExecuteTemplate(w, name+".html", p); err != nil {
		h.cfg.Logger.Error("dashboard: render", "page", name, "err", err)
	}
}

// maxRefill is the longest value, in characters, that a form is filled
// again with: the longest any of the dashboard's fields accepts (a
// webhook's URL, 2,048 bytes).
const maxRefill = 2048

// refill returns the value a form field posted with v is filled again
// with: v itself, or, when v is longer than any field accepts, its first
// [tradekit.MaxQuoted] characters, as error messages quote what users
// sent ([tradekit.Quote]), so that a page never echoes more than that of
// an oversized value.
func refill(v string) string {
	if utf8.RuneCountInString(v) <= maxRefill {
		return v
	}
	n := 0
	for i := range v {
		if n == tradekit.MaxQuoted {
			return v[:i]
		}
		n++
	}
	return v
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
	se, u, err := h.cfg.Billing.Session(r.Context(), c.Value, h.cfg.Now())
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
		http.Redirect(w, r, "/dashboard/usage", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
}

// signInPage shows the form with a fresh pre-session CSRF token.
func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request) {
	if _, _, ok := h.session(r); ok {
		http.Redirect(w, r, "/dashboard/usage", http.StatusSeeOther)
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
	h.render(w, status, "sign-in", page{Title: "Sign in", CSRF: token, Form: map[string]string{"email": email}, Errors: errs})
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
	ctx, st, now, addr := r.Context(), h.cfg.Billing, h.cfg.Now(), billing.ClientAddress(r.RemoteAddr)
	limited, until, err := st.SignInThrottled(ctx, email, addr, now, h.cfg.Throttle)
	if err != nil {
		h.fail(w, err)
		return
	}
	if limited {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(until.Sub(now).Seconds()))))
		h.renderSignIn(w, r, http.StatusTooManyRequests, email, map[string]string{
			"form": "Too many failed sign-ins from your address. Try again after " + until.UTC().Format("15:04 UTC") + "."})
		return
	}
	u, err := st.SignIn(ctx, email, password, h.cfg.Passwords)
	switch {
	case errors.Is(err, tradekit.ErrUnauthorized):
		if err := st.RecordSignInFailure(ctx, email, addr, now); err != nil {
			h.fail(w, err)
			return
		}
		h.renderSignIn(w, r, http.StatusUnauthorized, email, map[string]string{"form": "Wrong email or password."})
	case errors.Is(err, billing.ErrPasswordBusy):
		h.busy(w)
		h.renderSignIn(w, r, http.StatusServiceUnavailable, email, map[string]string{"form": busyMessage})
	case ctx.Err() != nil:
		// The browser left while the password waited for slots: nobody
		// reads an answer.
	case err != nil:
		h.fail(w, err)
	default:
		h.startSession(w, r, u)
	}
}

// busyMessage is shown when the password-hashing slots stayed taken.
const busyMessage = "The server is busy checking other sign-ins. Wait a moment and try again."

// busy sets the Retry-After of an answer refused with
// billing.ErrPasswordBusy: slots usually free within billing.PasswordWait.
func (h *Handler) busy(w http.ResponseWriter) {
	w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(billing.PasswordWait.Seconds()))))
}

// startSession signs the user in and sends them to the dashboard's first
// page.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, u billing.User) {
	token, _, err := h.cfg.Billing.CreateSession(r.Context(), u.ID, h.cfg.Now(), h.cfg.SessionTTL)
	if err != nil {
		h.fail(w, err)
		return
	}
	h.setCookie(w, r, sessionCookie, token, int(h.cfg.SessionTTL.Seconds()))
	h.setCookie(w, r, csrfCookie, "", -1)
	http.Redirect(w, r, "/dashboard/usage", http.StatusSeeOther)
}

// visit is a signed-in request.
type visit struct {
	w  http.ResponseWriter
	r  *http.Request
	se billing.Session
	u  billing.User
}

// withSession runs fn for a signed-in request whose form, for a POST,
// carries the session's CSRF token; otherwise it sends GETs to the sign-in
// page and refuses POSTs.
func (h *Handler) withSession(w http.ResponseWriter, r *http.Request, fn func(v visit)) {
	se, u, ok := h.session(r)
	switch {
	case !ok && r.Method == http.MethodGet:
		http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	case !ok:
		h.forbidden(w, "you are not signed in, or your session expired: sign in again")
	case r.Method == http.MethodPost && !sameToken(se.CSRFToken, r.PostFormValue("csrf")):
		h.forbidden(w, "the form's security token is missing or stale: reload the page and try again")
	default:
		fn(visit{w: w, r: r, se: se, u: u})
	}
}

// show renders a signed-in page.
func (h *Handler) show(v visit, status int, name, title string, p page) {
	p.Title, p.User, p.CSRF = title, &v.u, v.se.CSRFToken
	h.render(v.w, status, name, p)
}

// action runs a button's action on the object of the path's id and
// returns to the page to(id), with the action's notice or the reason it
// was refused.
func (h *Handler) action(w http.ResponseWriter, r *http.Request, to func(uuid.UUID) string, act func(visit, uuid.UUID) (noticeCode, error)) {
	h.withID(w, r, func(v visit, id uuid.UUID) {
		msg, err := act(v, id)
		if _, ok := formErrors(err); ok {
			msg = refusedNotice(err)
		} else if err != nil {
			h.fail(w, err)
			return
		}
		back(v, to(id), msg)
	})
}

// baseURL returns the server's public base URL: the configured one, or
// the request's scheme and host.
func (h *Handler) baseURL(r *http.Request) string {
	if h.cfg.PublicURL != "" {
		return strings.TrimRight(h.cfg.PublicURL, "/")
	}
	scheme := "http"
	if secure(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// formErrors turns a refused request into errors beside the form's
// fields, as the API would word them ([tradekit.Message]): a parameter
// error names its field; a [*tradekit.Error] or another error of a known
// kind is the whole form's. Any other error is no user's doing, and ok is
// false.
func formErrors(err error) (errs map[string]string, ok bool) {
	if p := tradekit.Param(err); p != "" {
		// The message reads "param: msg"; beside the field, msg says it.
		return map[string]string{p: sentence(strings.TrimPrefix(tradekit.Message(err), p+": "))}, true
	}
	if msg := tradekit.Message(err); msg != "" {
		return map[string]string{"form": sentence(msg)}, true
	}
	if msg, ok := formKinds[tradekit.Code(err)]; ok {
		return map[string]string{"form": msg}, true
	}
	return nil, false
}

// formKinds words the errors of a known kind that carry no message for
// users, by [tradekit.Code].
var formKinds = map[string]string{
	"NOT_FOUND":        "It does not exist, or no longer.",
	"CONFLICT":         "That conflicts with its current state: reload the page and try again.",
	"FORBIDDEN":        "You may not do that.",
	"VALIDATION_ERROR": "That is not a valid request.",
}

// sentence capitalises msg and ends it with a full stop.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	h.withSession(w, r, func(visit) {
		if c, err := r.Cookie(sessionCookie); err == nil {
			if err := h.cfg.Billing.DeleteSession(r.Context(), c.Value); err != nil {
				h.fail(w, err)
				return
			}
		}
		h.setCookie(w, r, sessionCookie, "", -1)
		http.Redirect(w, r, "/dashboard/sign-in", http.StatusSeeOther)
	})
}

// forbidden answers a refused request with a page saying why.
func (h *Handler) forbidden(w http.ResponseWriter, msg string) {
	h.render(w, http.StatusForbidden, "error", page{Title: "Forbidden", Errors: map[string]string{"form": "Forbidden: " + msg + "."}})
}

// fail answers a request that failed on the server's side, and logs why.
func (h *Handler) fail(w http.ResponseWriter, err error) {
	h.cfg.Logger.Error("dashboard", "err", err)
	h.render(w, http.StatusInternalServerError, "error", page{Title: "Error", Errors: map[string]string{
		"form": "Something went wrong on our side; the server's log has the details. Try again in a moment."}})
}
