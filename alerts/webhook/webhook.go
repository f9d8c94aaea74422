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

	"code.dny.dev/ssrf"

	"github.com/tradekit/tradekit"
)

// Header names of a delivery.
const (
	SignatureHeader = "Tradekit-Signature" // t=<unix seconds>,d=<delivery id>,v1=<hex HMAC-SHA256>
	DeliveryHeader  = "Tradekit-Delivery"  // the delivery's id: the same on every retry, and signed
	EventHeader     = "Tradekit-Event"     // the notification's kind, e.g. "alert"
)

// SecretPrefix starts every webhook secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far from the receiver's clock the signed time
// may be when [Verify] is given a tolerance of 0.
const DefaultTolerance = 5 * time.Minute

// NewSecret returns a new random secret: SecretPrefix and 32 random bytes
// in unpadded base64url.
func NewSecret() string {
	b := make([]byte, 32)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// Sign returns the Tradekit-Signature header of the delivery id of body,
// sent at t with the secret:
//
//	t=<unix seconds>,d=<id>,v1=<hex HMAC-SHA256 of "<t>.<id>.<body>">
//
// It panics if id holds a comma or a dot, which would make the header
// ambiguous (delivery ids are UUIDs).
func Sign(secret, id string, t time.Time, body []byte) string {
	if strings.ContainsAny(id, ",.") {
		panic("webhook: delivery id holds a comma or a dot")
	}
	ts := strconv.FormatInt(t.Unix(), 10)
	return "t=" + ts + ",d=" + id + ",v1=" + hex.EncodeToString(mac(secret, ts, id, body))
}

// mac returns HMAC-SHA256 of "<ts>.<id>.<body>" keyed with secret, or of
// "<ts>.<body>" when id is empty (signatures made before delivery ids
// were signed).
func mac(secret, ts, id string, body []byte) []byte {
	h := hmac.New(sha256.New, []byte(secret))
	h.Write([]byte(ts))
	h.Write([]byte{'.'})
	if id != "" {
		h.Write([]byte(id))
		h.Write([]byte{'.'})
	}
	h.Write(body)
	return h.Sum(nil)
}

// ErrSignature is wrapped by every error of [Verify] and [VerifyRequest].
var ErrSignature = errors.New("webhook: bad signature")

// Verify checks the Tradekit-Signature header of body against the secret:
// one of its v1 values must be the HMAC of "<t>.<d>.<body>", and t must be
// within tolerance of now. A tolerance of 0 (or less) means
// [DefaultTolerance]: a signature's age is always checked. The error
// wraps [ErrSignature]. [VerifyRequest] also returns the signed delivery
// id, to drop duplicates by.
func Verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) error {
	_, err := verify(secret, header, body, now, tolerance)
	return err
}

// verify is [Verify], returning the signed delivery id.
func verify(secret, header string, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	var ts, id string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "d":
			id = v
		case "v1":
			if b, err := hex.DecodeString(v); err == nil {
				sigs = append(sigs, b)
			}
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", fmt.Errorf("%w: no timestamp t", ErrSignature)
	}
	if id == "" {
		return "", fmt.Errorf("%w: no delivery id d", ErrSignature)
	}
	if len(sigs) == 0 {
		return "", fmt.Errorf("%w: no v1 signature", ErrSignature)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	if d := now.Sub(time.Unix(sec, 0)).Abs(); d > tolerance {
		return "", fmt.Errorf("%w: timestamp is %v away from now, more than the tolerance of %v", ErrSignature, d.Round(time.Second), tolerance)
	}
	want := mac(secret, ts, id, body)
	for _, s := range sigs {
		if hmac.Equal(s, want) {
			return id, nil
		}
	}
	return "", fmt.Errorf("%w: no v1 signature matches", ErrSignature)
}

// VerifyRequest checks the signature of a delivery request whose header
// is h and whose raw body is body (see [Verify]), and that its
// Tradekit-Delivery header is the signed delivery id, which it returns.
// The error wraps [ErrSignature].
func VerifyRequest(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) (string, error) {
	id, err := verify(secret, h.Get(SignatureHeader), body, now, tolerance)
	if err != nil {
		return "", err
	}
	if got := h.Get(DeliveryHeader); got != id {
		return "", fmt.Errorf("%w: %s is %q, not the signed delivery id %q", ErrSignature, DeliveryHeader, got, id)
	}
	return id, nil
}

// Client sends webhook requests, refusing destinations outside the public
// internet unless AllowPrivate is set. The zero value is ready to use.
type Client struct {
	// AllowPrivate lets webhooks reach any address, loopback, private and
	// link-local included: for tests and local use (serve
	// --allow-private-webhooks).
	AllowPrivate bool
	// Timeout bounds one request, from dialling to the end of the
	// response's headers. Default 10 s.
	Timeout time.Duration
	// Resolver looks names up when dialling. Default net.DefaultResolver.
	Resolver *net.Resolver

	once sync.Once
	hc   *http.Client
}

// ErrNotPublic is the error of a destination outside the public internet:
// at creation ([Client.CheckURL], inside a *tradekit.ParamError) and at
// delivery ([Client.Post]). Its message names no address, so that
// webhooks cannot be used to learn how the server's network resolves
// names.
var ErrNotPublic = errors.New("webhook: " + notPublic)

// notPublic is the message of [ErrNotPublic].
const notPublic = "the destination is not on the public internet (loopback, private, link-local or another special-purpose address); " +
	"webhooks must reach public addresses unless the server runs with serve --allow-private-webhooks"

// guardian refuses the IANA special-purpose addresses, on any port.
var guardian = ssrf.New(ssrf.WithAnyPort())

// invalidURL returns the *tradekit.ParamError of a refused url.
func invalidURL(format string, args ...any) error {
	return &tradekit.ParamError{Param: "url", Msg: fmt.Sprintf(format, args...)}
}

// CheckURL returns a *tradekit.ParamError naming "url" unless rawURL is
// an absolute http or https URL without credentials or fragment whose
// host, when it is a literal address or the name localhost (or a
// subdomain of it), is one the client may reach. Other names are not
// resolved: [Client.Post] checks the addresses they resolve to when it
// dials.
func (c *Client) CheckURL(_ context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.Fragment != "" {
		return invalidURL("must be an absolute http or https URL without credentials or fragment, got %s", tradekit.Quote(rawURL))
	}
	if c.AllowPrivate {
		return nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return invalidURL("%s", notPublic)
	}
	if ip, err := netip.ParseAddr(host); err == nil && !Public(ip) {
		return invalidURL("%s", notPublic)
	}
	return nil
}

// Public reports whether ip may be a webhook's destination: an address
// outside every IANA special-purpose range (see the package
// documentation). An IPv4-mapped IPv6 address is judged as the IPv4
// address it maps.
func Public(ip netip.Addr) bool {
	return ip.IsValid() && guardian.SafeAddr(ip.Unmap()) == nil
}

// control is the dialer's Control function: it refuses every address
// that is not [Public], on the address about to be connected to.
func control(network, address string, _ syscall.RawConn) error {
	if network != "tcp4" && network != "tcp6" {
		return ErrNotPublic
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !Public(ap.Addr()) {
		return ErrNotPublic
	}
	return nil
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
	d := &net.Dialer{Timeout: min(5*time.Second, timeout), Resolver: c.Resolver}
	if !c.AllowPrivate {
		d.Control = control
	}
	return &http.Client{
		Timeout:       timeout,
		Transport:     &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 2, IdleConnTimeout: 30 * time.Second},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Post sends body as a JSON POST to rawURL with the headers, and returns
// the response's status code; the response body (at most 64 KiB of it) is
// read and dropped. Its errors name no address the URL's host resolved
// to: a refused destination wraps [ErrNotPublic], a name that does not
// resolve says so, a timeout gives the time waited.
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
	hc := c.client()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, describe(err, hc.Timeout)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, nil
}

// describe returns the error of a failed request without the addresses
// and resolvers that net's errors name.
func describe(err error, timeout time.Duration) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var urlErr *url.Error
	switch {
	case errors.Is(err, ErrNotPublic):
		return ErrNotPublic
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("webhook: request cancelled: %w", context.Canceled)
	case errors.As(err, &dnsErr):
		return fmt.Errorf("webhook: host %s does not resolve", tradekit.Quote(dnsErr.Name))
	case errors.As(err, &urlErr) && urlErr.Timeout():
		return fmt.Errorf("webhook: no answer within %v", timeout)
	case errors.As(err, &opErr):
		return fmt.Errorf("webhook: %s: %v", opErr.Op, opErr.Err)
	case errors.As(err, &urlErr):
		return fmt.Errorf("webhook: %v", urlErr.Err)
	}
	return fmt.Errorf("webhook: %w", err)
}
