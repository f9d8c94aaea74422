package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit/client"
)

// leaderPages serves GET /api/v1/copy-trading/leaders over n made-up
// leaders, as the server pages them, failing page failAt with a 400.
func leaderPages(t *testing.T, n, failAt int) (*client.API, *[]int) {
	t.Helper()
	var asked []int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		asked = append(asked, page)
		w.Header().Set("Content-Type", "application/json")
		if page == failAt {
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"code":"VALIDATION_ERROR","message":"page: no","details":{"fields":["page"]}}}`))
			return
		}
		data := []map[string]any{}
		for i := (page - 1) * limit; i < min(page*limit, n); i++ {
			data = append(data, map[string]any{"id": uuid.NewSHA1(uuid.Nil, []byte{byte(i)}), "slug": "l" + strconv.Itoa(i),
				"displayName": "L", "bio": "", "totalReturn": 0.1, "sharpeRatio": 1, "followers": i, "verified": false,
				"publishedAt": "2026-11-24T00:00:00.000Z"})
		}
		json.NewEncoder(w).Encode(map[string]any{"data": data, "meta": map[string]int{"total": n, "page": page, "limit": limit}})
	}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL, "k", client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return c, &asked
}

func TestLeadersPages(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	two := 2
	for _, tt := range []struct {
		n, want, pages int
	}{{0, 0, 1}, {1, 1, 1}, {4, 4, 2}, {5, 5, 3}} {
		c, asked := leaderPages(t, tt.n, -1)
		got := 0
		for l, err := range c.Leaders(ctx, client.ListLeadersParams{Limit: &two}) {
			if err != nil {
				t.Fatal(err)
			}
			if l.Followers != got {
				t.Errorf("%d leaders: item %d is leader %d", tt.n, got, l.Followers)
			}
			got++
		}
		if got != tt.want || len(*asked) != tt.pages {
			t.Errorf("%d leaders by 2: %d items over %d pages %v, want %d over %d", tt.n, got, len(*asked), *asked, tt.want, tt.pages)
		}
	}

	// Breaking out asks for no further page.
	c, asked := leaderPages(t, 10, -1)
	for range c.Leaders(ctx, client.ListLeadersParams{Limit: &two}) {
		break
	}
	if len(*asked) != 1 {
		t.Errorf("break after one item: pages %v", *asked)
	}

	// An error ends the iteration, yielded once as an *Error.
	c, _ = leaderPages(t, 10, 2)
	var items int
	var errs []error
	for _, err := range c.Leaders(ctx, client.ListLeadersParams{Limit: &two}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		items++
	}
	var e *client.Error
	if items != 2 || len(errs) != 1 || !errors.As(errs[0], &e) || e.Code != "VALIDATION_ERROR" || e.Details["fields"] == nil {
		t.Errorf("failing page 2: %d items, errors %v", items, errs)
	}
}
