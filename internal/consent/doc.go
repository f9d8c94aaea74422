// Package consent plays a browser on the paper broker's consent page, for
// programs that connect a paper account without a person at a browser:
// the server tests, the fault run and the trading walkthrough.
//
// It opens the authorization URL (the page sets the paper_csrf cookie in
// the browser's jar), reads the page's form (its action, its hidden
// fields with the signed CSRF token, and the button of the choice), posts
// it once, and follows the broker's redirect to Tradekit's OAuth callback,
// stopping at the client application's URL, where a browser would land.
package consent
