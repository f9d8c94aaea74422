package dashboard

import "crypto/rand"

// contentSecurityPolicy returns the Content-Security-Policy of a page
// rendered with nonce: only the inline <script> and <style> elements that
// carry it run or apply, and no script or style is loaded from anywhere.
// Without a nonce (redirects, plain-text answers) no script or style runs
// at all. It sets no form-action, since connecting a broker redirects a
// form's post to the broker's site.
func contentSecurityPolicy(nonce string) string {
	src := "'none'"
	if nonce != "" {
		src = "'nonce-" + nonce + "'"
	}
	return "default-src 'none'; script-src " + src + "; style-src " + src + "; " +
		"img-src data:; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'"
}

// newNonce returns a fresh CSP nonce: 128 random bits, base32-encoded,
// which is within CSP's base64-value alphabet.
func newNonce() string {
	return rand.Text()
}
