package alpaca_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"

	"golang.org/x/oauth2"

	"github.com/tradekit/tradekit/brokers/alpaca"
)

func ExampleNew() {
	// A stand-in for Alpaca's paper trading API.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer 79500537-5796-4230-9661-7f7108877c60" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"code":40110000,"message":"request is not authorized"}`)
			return
		}
		switch r.URL.Path {
		case "/v2/account":
			fmt.Fprint(w, `{"id":"e6fe16f3-64a4-4921-8928-cadf02f92f98","account_number":"PA3BQYZ0LMOE",
				"status":"ACTIVE","currency":"USD","cash":"99872.93","equity":"101132.54","multiplier":"2"}`)
		case "/v2/positions":
			fmt.Fprint(w, `[{"symbol":"AAPL","qty":"5","side":"long","avg_entry_price":"100.0",
				"market_value":"600.0","cost_basis":"500.0","unrealized_pl":"100.0"}]`)
		}
	}))
	defer api.Close()

	conf := alpaca.OAuthConfig("client-id", "client-secret", alpaca.AuthorizeURL, alpaca.TokenURL, "https://tradekit.example/callback")
	c := alpaca.New(alpaca.Config{
		BaseURL: api.URL, // alpaca.PaperURL in real use
		OAuth:   conf,
		Token:   &oauth2.Token{AccessToken: "79500537-5796-4230-9661-7f7108877c60"},
	})
	ctx := context.Background()
	acct, err := c.Account(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(acct.Status, acct.Currency, "cash", acct.Cash, "equity", acct.Equity)
	positions, err := c.Positions(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range positions {
		fmt.Println(p.Symbol, p.Quantity, "at", p.AvgEntryPrice, "worth", p.MarketValue)
	}
	// Output:
	// ACTIVE USD cash 99872.93 equity 101132.54
	// AAPL 5 at 100 worth 600
}
