package paper_test

import (
	"context"
	"log"
	"net/http"
	"time"

	"github.com/shopspring/decimal"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit/brokers"
	"github.com/tradekit/tradekit/brokers/paper"
	"github.com/tradekit/tradekit/brokers/paper/portal"
)

// ExampleBroker_Handler mounts the paper broker's API under /paper, with
// its portal in front of it as `tradekit serve` mounts them, and fills an
// order in an account that a user opened on the portal's consent page.
func ExampleBroker_Handler() {
	var db *bun.DB // opened and migrated with package internal/database
	b := paper.New(db, paper.Config{})
	p := portal.New(db, b, portal.Config{
		Clients: []portal.Client{{
			ID: "tradekit", Secret: "a long random secret", Name: "Tradekit",
			RedirectURIs: []string{"https://tradekit.example/brokers/callback"},
		}},
		Prefix: "/paper",
	})
	mux := http.NewServeMux()
	mux.Handle("/paper/", http.StripPrefix("/paper", p.Handler()))

	// accountID is the "id" of GET /paper/v2/account.
	accountID := "5f0c0d4e-8a63-4d1e-9d3b-2d1b7a0c9e11"
	o, err := b.Fill(context.Background(), accountID, "ACME", brokers.Buy,
		decimal.RequireFromString("2.5"), decimal.RequireFromString("101.25"), time.Time{})
	if err != nil {
		log.Fatal(err)
	}
	log.Println(o.Status, o.FilledQty, o.FilledAvgPrice)
}
