package consent

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// CallbackPath is where the broker sends the browser back: Tradekit's
// OAuth callback.
const CallbackPath = "/api/v1/brokers/oauth/callback"

// Browser returns an HTTP client with a cookie jar that follows redirects
// until one leads to appHost, the client application's host, and stops
// there. rt is its transport (nil: http.DefaultTransport).
func Browser(appHost string, rt http.RoundTripper) *http.Client {
	jar, _ := cookiejar.New(nil) // cookiejar.New never fails without options
	return &http.Client{Transport: rt, Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Host == appHost {
				return http.ErrUseLastResponse
			}
			return nil
		}}
}

// Decide opens the consent page at authURL with the browser b (see
// [Browser]) and answers it with choice, "approve" or "deny". It returns
// the application URL the callback sent the browser to (with
// connectionId and status, or error) and the callback's own URL.
func Decide(ctx context.Context, b *http.Client, authURL, choice string) (back, callback *url.URL, err error) {
	req, err := http.NewRequestWithContext(ctx, "GET", authURL, nil)
	if err != nil {
		return nil, nil, err
	}
	res, err := b.Do(req)
	if err != nil {
		return nil, nil, fmt.Errorf("consent page: %w", err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		return nil, nil, fmt.Errorf("consent page: %d %s", res.StatusCode, page)
	}
	action, form, err := Form(res.Request.URL, page, choice)
	if err != nil {
		return nil, nil, err
	}
	req, err = http.NewRequestWithContext(ctx, "POST", action.String(), strings.NewReader(form.Encode()))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if res, err = b.Do(req); err != nil {
		return nil, nil, fmt.Errorf("consent: %w", err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther || res.Request.URL.Path != CallbackPath {
		return nil, nil, fmt.Errorf("after consent: %d at %s, want 303 from the callback", res.StatusCode, res.Request.URL)
	}
	if back, err = url.Parse(res.Header.Get("Location")); err != nil {
		return nil, nil, err
	}
	return back, res.Request.URL, nil
}

// The consent page's form.
var (
	formRE   = regexp.MustCompile(`(?is)<form[^>]*method="post"[^>]*>(.*?)</form>`)
	actionRE = regexp.MustCompile(`(?is)<form[^>]*action="([^"]*)"`)
	inputRE  = regexp.MustCompile(`(?is)<(input|button)\b([^>]*)>`)
	attrRE   = regexp.MustCompile(`(?is)\b(name|value|type)="([^"]*)"`)
)

// Form reads a consent page: where its form posts to (resolved against
// the page's URL) and the values to post for choice: the hidden fields,
// the CSRF token among them, and the submit button whose value contains
// choice.
func Form(pageURL *url.URL, page []byte, choice string) (*url.URL, url.Values, error) {
	form := formRE.FindSubmatch(page)
	if form == nil {
		return nil, nil, fmt.Errorf("no POST form on the consent page:\n%s", page)
	}
	action := pageURL
	if m := actionRE.FindSubmatch(page); m != nil {
		if u, err := pageURL.Parse(html.UnescapeString(string(m[1]))); err == nil {
			action = u
		}
	}
	values := url.Values{}
	chosen := false
	for _, m := range inputRE.FindAllSubmatch(form[1], -1) {
		attrs := map[string]string{}
		for _, a := range attrRE.FindAllSubmatch(m[2], -1) {
			attrs[strings.ToLower(string(a[1]))] = html.UnescapeString(string(a[2]))
		}
		switch {
		case attrs["name"] == "":
		case strings.EqualFold(string(m[1]), "button") || attrs["type"] == "submit":
			if strings.Contains(strings.ToLower(attrs["value"]), choice) && !chosen {
				values.Set(attrs["name"], attrs["value"])
				chosen = true
			}
		default:
			values.Set(attrs["name"], attrs["value"])
		}
	}
	if !chosen {
		return nil, nil, fmt.Errorf("no %q button on the consent page:\n%s", choice, page)
	}
	return action, values, nil
}
