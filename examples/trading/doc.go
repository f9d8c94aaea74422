// Command trading walks through Tradekit's trading API against a running
// server, as docs/api.md's Brokers and Orders sections describe it, printing
// what each call answers:
//
//	go run ./cmd/tradekit serve &                     # the demo data set, the paper broker
//	KEY=$(go run ./cmd/tradekit keys create --email you@example.com --name walkthrough --plan pro | tail -n 1)
//	go run ./examples/trading -key "$KEY"
//
// It connects a paper account (approving the paper broker's consent page
// as the user's browser would: a person does that in a browser), syncs
// it, reads the portfolio, tightens a guardrail (at most 10 % of equity
// in one position, from the default 20 %), previews and places a market
// buy of a demo stock with a stop-loss and waits for its fill, places a
// limit buy far below the price and cancels it, lists the orders, and
// disconnects.
//
// Flags: -url (default http://127.0.0.1:8080), -key (default
// $TRADEKIT_KEY), -symbol (default HLXI, a demo stock).
package main
