package portal

import (
	"errors"
	"math"
	"net/http"
	"strconv"
)

// The three dialects of the handler's errors: HTML pages for the browser,
// OAuth JSON for clients at the token endpoints, Alpaca's JSON for the
// API. Handlers return errors; these adapters alone write them.

// page adapts a handler of the authorization endpoint: a *pageError is
// shown as it is (a *retryError with its Retry-After header), anything
// else as a 500 page, logged.
func (p *Portal) page(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return p.pageWith("This connection cannot go on", "Close this page and connect again from the application.", h)
}

// accountPages adapts a handler of the account page as page does the
// authorization endpoint's.
func (p *Portal) accountPages(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return p.pageWith("Paper account", accountNote, h)
}

// pageWith adapts a handler of HTML pages: a *pageError is shown with the
// title and the closing note, anything else as a 500 page, logged.
func (p *Portal) pageWith(title, note string, h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var re *retryError
		if errors.As(err, &re) {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(re.after.Seconds()))))
		}
		var pe *pageError
		if !errors.As(err, &pe) {
			p.logError(r, err)
			pe = &pageError{http.StatusInternalServerError, "Something went wrong on our side. Please try again later."}
		}
		title := title
		if pe.status >= 500 {
			title = "Something went wrong"
		}
		if err := p.render(w, pe.status, "error", errorPage{Title: title, Message: pe.msg, Note: note}); err != nil {
			p.logError(r, err)
			http.Error(w, "internal error", http.StatusInternalServerError)
		}
	})
}

// oauth adapts a handler of the token or revocation endpoint: an
// *oauthError is written as RFC 6749 §5.2 says, anything else as
// server_error, logged.
func (p *Portal) oauth(h func(http.ResponseWriter, *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		err := h(w, r)
		if err == nil {
			return
		}
		var oe *oauthError
		if !errors.As(err, &oe) {
			p.logError(r, err)
			oe = &oauthError{status: http.StatusInternalServerError, code: "server_error", desc: "internal error"}
		}
		if oe.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="paper"`)
		}
		writeOAuthJSON(w, oe.status, struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}{oe.code, oe.desc})
	})
}
