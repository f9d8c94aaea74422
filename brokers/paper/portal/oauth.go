package portal

import (
	"github.com/tradekit/tradekit/brokers/paper"

	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit"
)

// scopes lists the scopes a client may ask for, in the order the token
// endpoint reports them.
var scopes = []string{paper.ScopeAccountWrite, paper.ScopeTrading, paper.ScopeData}

// scopeText describes each scope on the consent page.
var scopeText = map[string]string{
	paper.ScopeAccountWrite: "change the account's settings and open its account page",
	paper.ScopeTrading:      "place, change and cancel orders, and close positions, in the account",
	paper.ScopeData:         "read market data",
}

// csrfCookie names the cookie that binds a consent form to the browser
// it was shown to, and csrfField the form field that holds the form's
// CSRF token (see [Portal.issueToken]).
const (
	csrfCookie = "paper_csrf"
	csrfField  = "csrf_token"
)

// csrfTTL is how long a consent page stays usable.
const csrfTTL = time.Hour

// maxForm bounds the body of a POST.
const maxForm = 64 << 10

//go:embed consent.html account.html
var pageFiles embed.FS

// pages holds the "consent", "account" and "error" pages.
var pages = template.Must(template.ParseFS(pageFiles, "consent.html", "account.html"))

// pageError is an error shown as an HTML page, without a redirect: what
// the authorization endpoint answers when it cannot trust the client or
// its redirect URI, or when the form fails the CSRF check.
type pageError struct {
	status int
	msg    string // a sentence for the user
}

func (e *pageError) Error() string { return "paper: " + e.msg }

// oauthError is an error answer of the token and revocation endpoints
// (RFC 6749 §5.2), or an error sent back to the client's redirect URI
// (§4.1.2.1).
type oauthError struct {
	status int    // 400, or 401 for invalid_client
	code   string // e.g. "invalid_grant"
	desc   string
}

func (e *oauthError) Error() string { return "paper: oauth: " + e.code + ": " + e.desc }

func badRequest(code, format string, args ...any) *oauthError {
	return &oauthError{status: http.StatusBadRequest, code: code, desc: fmt.Sprintf(format, args...)}
}

// authRequest is an authorization request (RFC 6749 §4.1.1, RFC 7636
// §4.3) whose client and redirect URI are known to be valid.
type authRequest struct {
	client              Client
	redirectURI         string
	responseType        string
	state               string
	scope               string
	codeChallenge       string
	codeChallengeMethod string
	loginHint           string // who the client says the user is, shown on the consent page
}

// parseAuthRequest reads an authorization request from the query (GET) or
// the form (POST). It checks the client and the redirect URI only: an
// error about them must be shown to the user, never sent to the URI.
func (p *Portal) parseAuthRequest(ctx context.Context, v url.Values) (authRequest, error) {
	for _, k := range []string{"client_id", "redirect_uri"} {
		if len(v[k]) > 1 {
			return authRequest{}, &pageError{http.StatusBadRequest, fmt.Sprintf("The request repeats the parameter %s.", k)}
		}
	}
	id := v.Get("client_id")
	c, ok, err := p.client(ctx, id)
	if err != nil {
		return authRequest{}, err
	}
	if id == "" || !ok {
		return authRequest{}, &pageError{http.StatusBadRequest, fmt.Sprintf("The application that sent you here is not registered with this broker (client_id %s), so you were not sent back to it.", tradekit.Quote(id))}
	}
	uri := v.Get("redirect_uri")
	if uri == "" {
		return authRequest{}, &pageError{http.StatusBadRequest, fmt.Sprintf("%s did not say where to send you back (redirect_uri is missing).", c.name())}
	}
	if !slices.Contains(c.RedirectURIs, uri) {
		return authRequest{}, &pageError{http.StatusBadRequest, fmt.Sprintf("%s asked to send you back to an address it did not register (redirect_uri %s), so you were not sent there.", c.name(), tradekit.Quote(uri))}
	}
	return authRequest{
		client:              c,
		redirectURI:         uri,
		responseType:        v.Get("response_type"),
		state:               v.Get("state"),
		scope:               v.Get("scope"),
		codeChallenge:       v.Get("code_challenge"),
		codeChallengeMethod: v.Get("code_challenge_method"),
		loginHint:           v.Get("login_hint"),
	}, nil
}

// check validates the rest of the request and normalises its scope. Its
// errors go back to the client's redirect URI.
func (ar *authRequest) check(v url.Values) *oauthError {
	for _, k := range []string{"response_type", "state", "scope", "code_challenge", "code_challenge_method", "login_hint"} {
		if len(v[k]) > 1 {
			return badRequest("invalid_request", "%s is repeated", k)
		}
	}
	switch ar.responseType {
	case "code":
	case "":
		return badRequest("invalid_request", "response_type is missing")
	default:
		return badRequest("unsupported_response_type", "only response_type=code is supported")
	}
	scope, err := normalizeScope(ar.scope)
	if err != nil {
		return err
	}
	ar.scope = scope
	// PKCE is required, S256 only (OAuth 2.1 §4.1.1); an absent method
	// means plain (RFC 7636 §4.3).
	switch {
	case ar.codeChallenge == "":
		return badRequest("invalid_request", "code_challenge is required: this broker requires PKCE with code_challenge_method=S256")
	case ar.codeChallengeMethod != "S256":
		return badRequest("invalid_request", "code_challenge_method must be S256")
	case !isChallenge(ar.codeChallenge):
		return badRequest("invalid_request", "code_challenge is not an S256 challenge (43 base64url characters)")
	}
	if !isLoginHint(ar.loginHint) {
		return badRequest("invalid_request", "login_hint is longer than %d bytes or not printable text", maxLoginHint)
	}
	return nil
}

// normalizeScope checks that every scope of the space-separated list s is
// one of scopes and returns them in that order, without repeats.
func normalizeScope(s string) (string, *oauthError) {
	asked := strings.Fields(s)
	for _, sc := range asked {
		if !slices.Contains(scopes, sc) {
			return "", badRequest("invalid_scope", "unknown scope %s", tradekit.Quote(sc))
		}
	}
	var out []string
	for _, sc := range scopes {
		if slices.Contains(asked, sc) {
			out = append(out, sc)
		}
	}
	return strings.Join(out, " "), nil
}

// isChallenge reports whether s is a well-formed S256 code challenge:
// BASE64URL(SHA256(verifier)), 43 characters.
func isChallenge(s string) bool {
	if len(s) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil
}

// isVerifier reports whether s is a well-formed PKCE code verifier (RFC
// 7636 §4.1): 43 to 128 unreserved characters.
func isVerifier(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// s256 returns the S256 challenge of a verifier.
func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// redirect sends the user agent back to the client with params and the
// request's state (RFC 6749 §4.1.2).
func redirect(w http.ResponseWriter, r *http.Request, ar authRequest, params url.Values) {
	u, _ := url.Parse(ar.redirectURI) // checked by New
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if ar.state != "" {
		q.Set("state", ar.state)
	}
	u.RawQuery = q.Encode()
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Referrer-Policy", "no-referrer")
	http.Redirect(w, r, u.String(), http.StatusSeeOther)
}

// redirectError sends an error back to the client (RFC 6749 §4.1.2.1).
func redirectError(w http.ResponseWriter, r *http.Request, ar authRequest, e *oauthError) {
	redirect(w, r, ar, url.Values{"error": {e.code}, "error_description": {e.desc}})
}

// consentPage is the data of the consent page.
type consentPage struct {
	Client string   // the client's registered name
	User   string   // the client's user, as its login_hint names them; "" when it does not
	Money  string   // the starting cash, e.g. "100,000.00 USD"
	Scopes []string // what each granted scope allows, in words
	Host   string   // where the user returns to
	Action string   // the form's action
	Hidden []hiddenField
}

type hiddenField struct{ Name, Value string }

// errorPage is the data of the error page.
type errorPage struct {
	Title   string
	Message string
	Note    string // what the user may do next
}

// handleAuthorizeShow answers GET /oauth/authorize with the consent page.
func (p *Portal) handleAuthorizeShow(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	ar, err := p.parseAuthRequest(r.Context(), q)
	if err != nil {
		return err
	}
	if e := ar.check(q); e != nil {
		redirectError(w, r, ar, e)
		return nil
	}
	binding := ""
	if c, err := r.Cookie(csrfCookie); err == nil && paper.IsSecret(c.Value) {
		binding = c.Value // keep the form of a consent page open in another tab valid
	} else {
		binding = paper.NewSecret()
	}
	http.SetCookie(w, p.csrfCookie(r, binding, int(csrfTTL/time.Second)))
	hidden := []hiddenField{
		{"response_type", ar.responseType},
		{"client_id", ar.client.ID},
		{"redirect_uri", ar.redirectURI},
		{"state", ar.state},
		{"scope", ar.scope},
		{"code_challenge", ar.codeChallenge},
		{"code_challenge_method", ar.codeChallengeMethod},
	}
	if ar.loginHint != "" {
		hidden = append(hidden, hiddenField{"login_hint", ar.loginHint})
	}
	hidden = append(hidden, hiddenField{csrfField, p.issueToken(ar, binding, p.clock().Add(csrfTTL))})
	host := ar.redirectURI
	if u, err := url.Parse(ar.redirectURI); err == nil {
		host = u.Host
	}
	var allowed []string
	for _, sc := range strings.Fields(ar.scope) {
		allowed = append(allowed, scopeText[sc])
	}
	cash, currency := p.broker.StartingCash()
	return p.render(w, http.StatusOK, "consent", consentPage{
		Client: ar.client.name(),
		User:   ar.loginHint,
		Money:  formatMoney(cash) + " " + currency,
		Scopes: allowed,
		Host:   host,
		Action: p.prefix + "/oauth/authorize",
		Hidden: hidden,
	})
}

// csrfCookie returns the CSRF cookie with the given value and max age.
func (p *Portal) csrfCookie(r *http.Request, value string, maxAge int) *http.Cookie {
	return &http.Cookie{
		Name:     csrfCookie,
		Value:    value,
		Path:     p.prefix + "/oauth/authorize",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	}
}

// handleAuthorizeDecide answers POST /oauth/authorize, the user's
// decision: Approve opens a paper account and sends a code back to the
// client; Deny sends access_denied. The form's CSRF token must be one the
// broker signed for this request and this browser's cookie, unexpired
// and unused; it is then used up. Approvals count against the client
// address's sign-up limit.
func (p *Portal) handleAuthorizeDecide(w http.ResponseWriter, r *http.Request) error {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		return &pageError{http.StatusBadRequest, "The form could not be read."}
	}
	f := r.PostForm
	ar, err := p.parseAuthRequest(r.Context(), f)
	if err != nil {
		return err
	}
	now := p.clock()
	nonce, exp, ok := p.csrfToken(r, f, ar, now)
	if !ok {
		return &pageError{http.StatusForbidden, "This form has expired or did not come from this broker's page. Go back to the application and connect again."}
	}
	if e := ar.check(f); e != nil {
		redirectError(w, r, ar, e)
		return nil
	}
	decision := f.Get("decision")
	if decision != "approve" && decision != "deny" {
		return &pageError{http.StatusBadRequest, "Choose Approve or Deny."}
	}
	defer p.purgeConsent(context.WithoutCancel(r.Context()), now)
	if decision == "deny" {
		if err := claimNonce(r.Context(), p.db, nonce, exp); err != nil {
			return err
		}
		redirectError(w, r, ar, badRequest("access_denied", "the user denied the request"))
		return nil
	}
	code := paper.NewSecret()
	g := grant{
		ID: uuid.New(), CodeHash: paper.HashSecret(code), ClientID: ar.client.ID, RedirectURI: ar.redirectURI,
		Scope: ar.scope, CodeChallenge: ar.codeChallenge, CreatedAt: now, ExpiresAt: now.Add(CodeTTL),
	}
	if err := p.approve(r.Context(), nonce, exp, p.clientAddr(r), &g); err != nil {
		return err
	}
	redirect(w, r, ar, url.Values{"code": {code}})
	return nil
}

// csrfToken checks the form's CSRF token against the browser's CSRF
// cookie and the request (see [Portal.verifyToken]) and returns its nonce
// and expiry.
func (p *Portal) csrfToken(r *http.Request, f url.Values, ar authRequest, now time.Time) (string, time.Time, bool) {
	c, err := r.Cookie(csrfCookie)
	if err != nil || !paper.IsSecret(c.Value) || len(f[csrfField]) != 1 {
		return "", time.Time{}, false
	}
	return p.verifyToken(f.Get(csrfField), ar, c.Value, now)
}

// render writes the named page with the headers that keep it out of
// frames and caches and forbid every script.
func (p *Portal) render(w http.ResponseWriter, status int, name string, data any) error {
	var buf bytes.Buffer
	if err := p.pages.ExecuteTemplate(&buf, name, data); err != nil {
		return fmt.Errorf("paper: page %s: %w", name, err)
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	return nil
}

// formatMoney writes d with thousands separators and at least two decimal
// places: "100,000.00".
func formatMoney(d decimal.Decimal) string {
	s := d.StringFixed(2)
	if d.Exponent() < -2 {
		s = d.String()
	}
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	var out []byte
	for i := range len(intPart) {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, intPart[i])
	}
	if frac != "" {
		return sign + string(out) + "." + frac
	}
	return sign + string(out)
}
