package portal

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/brokers/paper"
)

// The account page: where the holder of a paper account creates and
// revokes its API keys. The paper broker has no users or passwords of its
// own, so the holder signs in with a single-use link that the application
// connected to the account asks for with the account's access token
// (POST /account/sign-in-links), or that the server running the broker
// makes with [Portal.SignInLink]: whoever the application lets trade the
// account may manage its keys.

// SignInLinkTTL is how long a sign-in link works, and SessionTTL how long
// the account page stays signed in after it is used.
const (
	SignInLinkTTL = 5 * time.Minute
	SessionTTL    = time.Hour
)

// sessionCookie names the cookie of an account page's session.
const (
	sessionCookie = "paper_session"
	signInCookie  = "paper_sign_in" // binds a sign-in link to the browser it was made for
)

// formLabel starts every message that the account page's CSRF tokens
// sign, so that no other use of the key can produce one.
const formLabel = "tradekit paper account form v1\x00"

// SignInLink returns a link that signs the browser of the request r in
// to the account page of the account, and when it expires: it works
// once, within [SignInLinkTTL], and only in that browser. SignInLink sets
// on w an HttpOnly cookie with a random value whose SHA-256 is stored
// with the link; using the link without it answers 403 and leaves the
// link usable, so that a link sent to someone else signs them in to
// nothing. The cookie's Path is the sign-in link's, so the server
// answering r must be reached at the host of the link (Config.PublicURL).
// The link is Config.PublicURL, Config.Prefix and
// "/account/sign-in?token=…", a path on the broker's host when PublicURL
// is empty. Only the SHA-256 of its token is stored. The error wraps
// [tradekit.ErrNotFound] when there is no such account.
func (p *Portal) SignInLink(w http.ResponseWriter, r *http.Request, accountID uuid.UUID) (string, time.Time, error) {
	binding := paper.NewSecret()
	link, exp, err := p.signInLink(r.Context(), accountID, paper.HashSecret(binding))
	if err != nil {
		return "", time.Time{}, err
	}
	http.SetCookie(w, &http.Cookie{
		Name:     signInCookie,
		Value:    binding,
		Path:     p.prefix + "/account/sign-in",
		MaxAge:   int(SignInLinkTTL / time.Second),
		HttpOnly: true,
		Secure:   r.TLS != nil || strings.HasPrefix(p.publicURL, "https:"),
		SameSite: http.SameSiteLaxMode,
	})
	return link, exp, nil
}

// signInLink makes a sign-in link to the account page of the account,
// bound to the browser whose binding cookie has the SHA-256 browser, or
// to none when browser is "".
func (p *Portal) signInLink(ctx context.Context, accountID uuid.UUID, browser string) (string, time.Time, error) {
	if _, err := p.broker.Account(ctx, accountID); err != nil {
		return "", time.Time{}, err
	}
	now := p.clock()
	tok, exp := paper.NewSecret(), now.Add(SignInLinkTTL)
	if err := insertSignInLink(ctx, p.db, paper.HashSecret(tok), accountID, exp, browser); err != nil {
		return "", time.Time{}, err
	}
	purgeSessions(ctx, p.db, p.log, now)
	return p.publicURL + p.prefix + "/account/sign-in?token=" + tok, exp, nil
}

// signInLinkJSON is the answer of POST /account/sign-in-links.
type signInLinkJSON struct {
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires_at"`
}

// handleSignInLink answers POST /account/sign-in-links: a sign-in link to
// the account page of the access token's account, with 201. The
// application asks for it from its server, not from its user's browser,
// so the link is bound to no browser: it works in whichever opens it
// first.
func (p *Portal) handleSignInLink(w http.ResponseWriter, r *http.Request, accountID uuid.UUID) error {
	u, exp, err := p.signInLink(r.Context(), accountID, "")
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	return json.NewEncoder(w).Encode(signInLinkJSON{URL: u, ExpiresAt: exp})
}

// accountCookie returns the session cookie with the given value and max
// age. It is sent only to the account page's paths and, unlike the
// consent page's, with SameSite=Lax, so that a browser arriving from the
// application's site through a sign-in link keeps it on the redirect.
func (p *Portal) accountCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     sessionCookie,
		Value:    value,
		Path:     p.prefix + "/account",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteLaxMode,
	}
}

// errLinkUsed is the page of a sign-in link that is unknown, expired or
// used.
var errLinkUsed = &pageError{http.StatusForbidden, "This sign-in link has expired or was used already."}

// errOtherBrowser is the page of a sign-in link opened in a browser other
// than the one it was made for.
var errOtherBrowser = &pageError{http.StatusForbidden, "This sign-in link was made for another browser. Open the account page from the application, in this browser."}

// errSignedOut is the page of a request without a valid session.
var errSignedOut = &pageError{http.StatusUnauthorized, "You are not signed in to a paper account, or your session has ended."}

// handleSignIn answers GET /account/sign-in?token=…: it uses up the
// sign-in link, starts a session of [SessionTTL] in a new cookie and sends
// the browser to the account page.
func (p *Portal) handleSignIn(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	if len(q["token"]) != 1 || !paper.IsSecret(q.Get("token")) {
		return errLinkUsed
	}
	now := p.clock()
	session := paper.NewSecret()
	browser := ""
	if c, err := r.Cookie(signInCookie); err == nil && paper.IsSecret(c.Value) {
		browser = paper.HashSecret(c.Value)
	}
	if err := startSession(r.Context(), p.db, paper.HashSecret(q.Get("token")), browser, paper.HashSecret(session), now); err != nil {
		return err
	}
	http.SetCookie(w, p.accountCookie(r, session, int(SessionTTL/time.Second)))
	http.SetCookie(w, &http.Cookie{Name: signInCookie, Path: p.prefix + "/account/sign-in", MaxAge: -1, HttpOnly: true,
		Secure: r.TLS != nil, SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, p.prefix+"/account", http.StatusSeeOther)
	return nil
}

// session returns the account of the request's session and the
// session's token. The error is errSignedOut when there is no session
// cookie, or its session is unknown or has expired.
func (p *Portal) session(r *http.Request) (paper.Account, string, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || !paper.IsSecret(c.Value) {
		return paper.Account{}, "", errSignedOut
	}
	id, err := sessionAccount(r.Context(), p.db, paper.HashSecret(c.Value), p.clock())
	if err != nil {
		return paper.Account{}, "", err
	}
	a, err := p.broker.Account(r.Context(), id)
	if err != nil {
		return paper.Account{}, "", err
	}
	return a, c.Value, nil
}

// formToken returns the CSRF token of the account page's forms for the
// session: base64url(HMAC-SHA256(key, label ‖ session)).
func (p *Portal) formToken(session string) string {
	m := hmac.New(sha256.New, p.key)
	m.Write([]byte(formLabel))
	m.Write([]byte(session))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// errFormForged is the page of an account form without the session's
// CSRF token.
var errFormForged = &pageError{http.StatusForbidden, "This form did not come from your account page. Reload the page and try again."}

// postedSession parses an account page's form and returns the account of
// the session it was posted in and the form, checking its CSRF token.
func (p *Portal) postedSession(w http.ResponseWriter, r *http.Request) (paper.Account, string, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return paper.Account{}, "", &pageError{http.StatusBadRequest, "The form could not be read."}
	}
	a, session, err := p.session(r)
	if err != nil {
		return paper.Account{}, "", err
	}
	f := r.PostForm
	if len(f[csrfField]) != 1 || !hmac.Equal([]byte(f.Get(csrfField)), []byte(p.formToken(session))) {
		return paper.Account{}, "", errFormForged
	}
	return a, session, nil
}

// accountPage is the data of the account page.
type accountPage struct {
	Number  string
	Money   string // the cash, e.g. "100,000.00 USD"
	Opened  string // the day the account opened
	APIBase string // the API's base URL, or its path when Config.PublicURL is empty
	Action  string // the path of the page, which its forms post under
	CSRF    string
	Max     int
	Keys    []keyLine
	NewKey  *newKeyPage // the key just created, with its secret
	Notice  string
	Error   string
	Name    string // the name of a refused new key, kept in its field
}

type keyLine struct{ ID, Name, Created string }

type newKeyPage struct{ ID, Secret string }

// showAccount renders the account page of a with the keys it holds.
func (p *Portal) showAccount(w http.ResponseWriter, r *http.Request, a paper.Account, session string, status int, page accountPage) error {
	keys, err := p.broker.APIKeys(r.Context(), a.ID)
	if err != nil {
		return err
	}
	for _, k := range keys {
		page.Keys = append(page.Keys, keyLine{ID: k.ID, Name: k.Name, Created: k.CreatedAt.Format("2 January 2006, 15:04 UTC")})
	}
	page.Number, page.Money, page.Opened = a.Number, formatMoney(a.Cash)+" "+a.Currency, a.CreatedAt.UTC().Format("2 January 2006")
	page.APIBase, page.Action = p.publicURL+p.prefix, p.prefix+"/account"
	page.CSRF, page.Max = p.formToken(session), paper.MaxAPIKeys
	return p.render(w, status, "account", page)
}

// handleAccountPage answers GET /account: the signed-in account's page.
func (p *Portal) handleAccountPage(w http.ResponseWriter, r *http.Request) error {
	a, session, err := p.session(r)
	if err != nil {
		return err
	}
	var page accountPage
	if id := r.URL.Query().Get("revoked"); paper.IsKeyID(id) {
		page.Notice = "The key " + id + " is revoked: requests with it are now refused."
	}
	return p.showAccount(w, r, a, session, http.StatusOK, page)
}

// handleKeyCreate answers POST /account/keys: it creates an API key and
// shows the page with its secret, once. A refused key shows the page with
// the reason.
func (p *Portal) handleKeyCreate(w http.ResponseWriter, r *http.Request) error {
	a, session, err := p.postedSession(w, r)
	if err != nil {
		return err
	}
	name := r.PostForm.Get("name")
	k, secret, err := p.broker.CreateAPIKey(r.Context(), a.ID, name)
	if err != nil {
		status, msg, ok := keyRefusal(err)
		if !ok {
			return err
		}
		return p.showAccount(w, r, a, session, status, accountPage{Error: msg, Name: name})
	}
	return p.showAccount(w, r, a, session, http.StatusOK, accountPage{NewKey: &newKeyPage{ID: k.ID, Secret: secret}})
}

// keyRefusal returns the status and the message of the account page that
// shows a refused new key: the status of err's kind ([tradekit.Status]),
// with a name's fault said of the name, and false for an error of no
// known kind or with no message for users, which answers 500.
func keyRefusal(err error) (int, string, bool) {
	status := tradekit.Status(err)
	if status == http.StatusInternalServerError {
		return 0, "", false
	}
	if pe := (*tradekit.ParamError)(nil); errors.As(err, &pe) {
		return status, "The name " + pe.Msg + ".", true
	}
	if msg := tradekit.Message(err); msg != "" {
		return status, sentence(msg), true
	}
	return 0, "", false
}

// handleKeyRevoke answers POST /account/keys/revoke: it revokes the key
// of the form's key_id and sends the browser back to the page.
func (p *Portal) handleKeyRevoke(w http.ResponseWriter, r *http.Request) error {
	a, session, err := p.postedSession(w, r)
	if err != nil {
		return err
	}
	id := r.PostForm.Get("key_id")
	err = p.broker.RevokeAPIKey(r.Context(), a.ID, id)
	if errors.Is(err, tradekit.ErrNotFound) {
		return p.showAccount(w, r, a, session, http.StatusNotFound, accountPage{Error: "This account has no key " + tradekit.Quote(id) + " to revoke."})
	}
	if err != nil {
		return err
	}
	http.Redirect(w, r, p.prefix+"/account?revoked="+id, http.StatusSeeOther)
	return nil
}

// handleSignOut answers POST /account/sign-out: it ends the session.
func (p *Portal) handleSignOut(w http.ResponseWriter, r *http.Request) error {
	if _, session, err := p.postedSession(w, r); err != nil {
		return err
	} else if err := endSession(r.Context(), p.db, paper.HashSecret(session)); err != nil {
		return err
	}
	http.SetCookie(w, p.accountCookie(r, "", -1))
	return p.render(w, http.StatusOK, "error", errorPage{Title: "Signed out", Message: "You are signed out of the paper account.", Note: accountNote})
}

// accountNote ends every page of the account page's errors.
const accountNote = "To manage the account's API keys, open its account page again from the application connected to it."

// sentence capitalises msg and ends it with a period.
func sentence(msg string) string {
	if msg == "" {
		return msg
	}
	return strings.ToUpper(msg[:1]) + msg[1:] + "."
}
