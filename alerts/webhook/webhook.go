// Package webhook signs, verifies and sends Tradekit's webhook requests.
//
// # Signature
//
// Every delivery is a JSON POST carrying the header
//
//	Tradekit-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>
//
// where the HMAC is keyed with the webhook's secret (shown once, when the
// webhook is created) and computed over the bytes
//
//	<t> "." <body>
//
// as Stripe signs its events. A receiver recomputes it over the raw body
// it read, compares in constant time, and refuses a t too far from its
// clock (a replayed request): [Verify] does all three.
//
//	body, _ := io.ReadAll(r.Body)
//	if err := webhook.Verify(secret, r.Header.Get("Tradekit-Signature"), body, time.Now(), 5*time.Minute); err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
//
// # Destinations
//
// [Client] sends the requests. Unless AllowPrivate is set, it refuses any
// destination that resolves to a loopback, private (RFC 1918, RFC 4193),
// link-local, unspecified, multicast or carrier-grade NAT address: when a
// webhook is created ([Client.CheckURL]) and again at every connection,
// on the address actually dialled, so a name that resolves to a public
// address at creation and to an internal one later is still refused. It
// follows no redirects.
package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tradekit/tradekit"
)

// Header names of a delivery.
const (
	SignatureHeader = "Tradekit-Signature" // t=<unix seconds>,v1=<hex HMAC-SHA256>
	DeliveryHeader  = "Tradekit-Delivery"  // the delivery's id: the same on every retry
	EventHeader     = "Tradekit-Event"     // the notification's kind, e.g. "alert"
)

// SecretPrefix starts every webhook secret.
const SecretPrefix = "whsec_"

// NewSecret returns a new random secret: SecretPrefix and 32 random bytes
// in unpadded base64url.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Sign returns the Tradekit-Signature header of body sent at t with the
// secret: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
func Sign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac(secret, ts, body))
}

// mac returns HMAC-SHA256 of "<ts>.<body>" keyed with secret.
func mac(secret, ts string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// ErrSignature is wrapped by every error of [Verify].
var ErrSignature = errors.New("webhook: bad signature")

// Verify checks the Tradekit-Signature header of body against the secret:
// one of its v1 values must be the HMAC of "<t>.<body>", and t must be
// within tolerance of now (0: any t). The error wraps [ErrSignature].
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	var ts string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: no timestamp t", ErrSignature)
	}
	if len(sigs) == 0 {
		return fmt.Errorf("%w: no v1 signature", ErrSignature)
	}
	if d := now.Sub(time.Unix(sec, 0)).Abs(); tolerance > 0 && d > tolerance {
		return fmt.Errorf("%w: timestamp is %v away from now", ErrSignature, d.Round(time.Second))
	}
	want := mac(secret, ts, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return nil
		}
	}
	return fmt.Errorf("%w: no v1 signature matches", ErrSignature)
}

// Client sends webhook requests, refusing private destinations unless
// AllowPrivate is set. The zero value is ready to use.
type Client struct {
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses: for tests and local use (serve --allow-private-webhooks).
	AllowPrivate bool
	// Timeout bounds one request. Default 10 s.
	Timeout time.Duration
	// Resolver looks names up. Default net.DefaultResolver.
	Resolver *net.Resolver

	once sync.Once
	hc   *http.Client
}

// invalidURL returns the *tradekit.ParamError of a refused url.
func invalidURL(format string, args ...any) error {
	return &tradekit.ParamError{Param: "url", Msg: fmt.Sprintf(format, args...)}
}

// CheckURL returns a *tradekit.ParamError naming "url" unless rawURL is
// an absolute http or https URL without credentials whose host resolves
// only to addresses the client may reach.
func (c *Client) CheckURL(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalidURL("must be an absolute http or https URL without credentials or fragment, got %s", tradekit.Quote(rawURL))
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		return c.checkAddr(ip, host)
	}
	r := c.Resolver
	if r == nil {
		r = net.DefaultResolver
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := r.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return invalidURL("host %s does not resolve", tradekit.Quote(host))
	}
	for _, ip := range ips {
		if err := c.checkAddr(ip, host); err != nil {
			return err
		}
	}
	return nil
}

// cgnat is RFC 6598's shared address space, which netip does not call
// private.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// checkAddr refuses ip unless the client may reach it.
func (c *Client) checkAddr(ip netip.Addr, host string) error {
	if c.AllowPrivate || Public(ip) {
		return nil
	}
	return invalidURL("host %s is the address %s, which is loopback, private or link-local; webhooks must reach the public internet",
		tradekit.Quote(host), ip)
}

// Public reports whether ip is a public unicast address: not loopback,
// private, link-local, unspecified, multicast or shared (100.64.0.0/10).
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsValid() && ip.IsGlobalUnicast() && !ip.IsPrivate() && !ip.IsLoopback() &&
		!ip.IsLinkLocalUnicast() && !cgnat.Contains(ip)
}

// client returns the http.Client of c, built once.
func (c *Client) client() *http.Client {
	c.once.Do(func() { c.hc = c.newClient() })
	return c.hc
}

// newClient returns an http.Client that checks every connection's address
// as it is dialled and follows no redirects.
func (c *Client) newClient() *http.Client {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	d := &net.Dialer{Timeout: 5 * time.Second, Resolver: c.Resolver, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if !c.AllowPrivate && !Public(ap.Addr()) {
			return fmt.Errorf("webhook: refused to connect to %s: not a public address", ap.Addr())
		}
		return nil
	}}
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Post sends body as a JSON POST to rawURL with the headers, and returns
// the response's status code; the response body (at most 64 KiB of it) is
// read and dropped.
func (c *Client) Post(ctx context.Context, rawURL string, header map[string]string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, fmt.Errorf("webhook: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "Tradekit-Webhooks/1")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return 0, fmt.Errorf("webhook: %w", err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}
