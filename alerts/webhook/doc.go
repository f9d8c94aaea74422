// Package webhook signs, verifies and sends Tradekit's webhook requests.
//
// # Signature
//
// Every delivery is a JSON POST carrying the headers
//
//	Tradekit-Delivery: <delivery id>
//	Tradekit-Signature: t=<unix seconds>,d=<delivery id>,v1=<hex HMAC-SHA256>
//
// where the HMAC is keyed with the webhook's secret (shown once, when the
// webhook is created) and computed over the bytes
//
//	<t> "." <d> "." <body>
//
// as Stripe signs its events, with the delivery id added: the id a
// receiver drops duplicates by is signed, so a replayed request cannot
// pass as a new delivery by changing it. A receiver recomputes the HMAC
// over the raw body it read, compares in constant time, and refuses a t
// too far from its clock (a replayed request): [Verify] does all three,
// and [VerifyRequest] also checks that Tradekit-Delivery is the signed id
// and returns it.
//
//	body, _ := io.ReadAll(r.Body)
//	id, err := webhook.VerifyRequest(secret, r.Header, body, time.Now(), 0) // 0: DefaultTolerance
//	if err != nil {
//		http.Error(w, "bad signature", http.StatusBadRequest)
//		return
//	}
//	// id is the delivery's: the same on every retry, so drop it if seen.
//
// # Destinations
//
// [Client] sends the requests. Unless AllowPrivate is set, it refuses any
// destination outside the public internet: every address of the IANA
// IPv4 and IPv6 special-purpose registries (loopback, private, link-local,
// shared, benchmarking, protocol assignments, reserved, multicast,
// documentation, 6to4, NAT64, site-local, everything outside 2000::/3 …),
// as code.dny.dev/ssrf lists them. The check runs on the address actually
// dialled, in the dialer's Control function, so a name that resolves to a
// public address at creation and to an internal one later (DNS
// rebinding) is still refused. [Client.CheckURL], used when a webhook is
// created, checks literal addresses and the name localhost, and resolves
// no other name: creating a webhook reveals nothing of the server's DNS.
// A name that resolves to a refused address fails at delivery time with
// [ErrNotPublic], whose message names no address. The client follows no
// redirects.
package webhook
