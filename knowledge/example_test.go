package knowledge_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"testing/fstest"
	"time"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/knowledge"
)

func ExampleLoad() {
	pack, err := knowledge.Load()
	if err != nil {
		fmt.Println(err)
		return
	}
	term, _ := pack.Term("true-range")
	fmt.Println(term.Name)
	fmt.Println(term.RelatedTerms)

	_, err = pack.Post("no-such-post")
	fmt.Println(errors.Is(err, tradekit.ErrNotFound))
	// Output:
	// True Range
	// [average-true-range gap ohlcv]
	// true
}

func ExamplePack_Posts() {
	pack, _ := knowledge.Load()
	for _, p := range pack.Posts(knowledge.PostFilter{Category: "indicators", FeaturedOnly: true}) {
		fmt.Println(p.PublishedAt.Format(time.DateOnly), p.Slug)
	}
	// Output:
	// 2026-03-01 rsi-wilder-smoothing
	// 2026-02-10 sma-vs-ema
}

func ExampleParse() {
	// A deployer's own pack, e.g. knowledge.Parse(os.DirFS("content")).
	fsys := fstest.MapFS{
		"glossary/categories/stats.md": {Data: []byte("---\nname: Statistics\nslug: stats\n---\n")},
		"glossary/terms/mean.md": {Data: []byte("---\nterm: Mean\nslug: mean\ncategory: stats\n" +
			"related: [median]\n---\nThe sum of the values divided by their count.\n")},
	}
	_, err := knowledge.Parse(fsys)
	fmt.Println(err)
	fmt.Println(errors.Is(err, tradekit.ErrInvalid))
	// Output:
	// knowledge: glossary/terms/mean.md:5: related term "median" does not exist
	// true
}

func ExampleTimestamp() {
	item := knowledge.RoadmapItem{
		ID: "example", Title: "Exchange trading-holiday calendars", Status: knowledge.StatusReleased, Category: "market_data",
		ReleasedAt: knowledge.Timestamp{Time: time.Date(2026, 5, 5, 10, 0, 0, 0, time.UTC)}, Votes: 164,
	}
	enc := json.NewEncoder(os.Stdout)
	_ = enc.Encode(item)
	// Output:
	// {"id":"example","title":"Exchange trading-holiday calendars","description":"","status":"released","category":"market_data","releasedAt":"2026-05-05T10:00:00.000Z","votes":164}
}
