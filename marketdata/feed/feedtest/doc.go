// Package feedtest is the test helpers of the feeds: a synthetic market
// and local fake providers (Massive, Alpaca market data) that serve it over
// HTTP in the providers' documented JSON shapes, with the recorded answers
// of testdata/ (each error body, an empty day, pages cut mid-range), so
// that clients, `feed run` and `serve --feed` are tested end to end without
// the network.
//
//	m := feedtest.NewMarket(500, calendar.NewDate(2026, 11, 2), calendar.NewDate(2026, 11, 30))
//	srv := feedtest.NewMassive(t, m)
//	srv.Fail("/v2/aggs/", 429, 1, "1") // the next grouped-daily request gets a 429
//	p, _ := massive.New(massive.Config{BaseURL: srv.URL, APIKey: srv.Key})
package feedtest
