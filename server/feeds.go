package server

import (
	"fmt"
	"net/http"
	"time"

	"github.com/uptrace/bunrouter"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// feedProviders are the providers GET /api/v1/market-data/feeds reports on.
var feedProviders = []string{"massive", "alpaca"}

// feedRunsShown is the number of last runs the feeds' status lists.
const feedRunsShown = 20

// feedRunJSON is a recorded run of a feed. The instance that ran it is
// left out: its host name is the operator's business.
type feedRunJSON struct {
	ID         string     `json:"id"`
	Provider   string     `json:"provider"`
	StartedAt  time.Time  `json:"startedAt"`
	FinishedAt *time.Time `json:"finishedAt"`
	Outcome    string     `json:"outcome"`
	From       string     `json:"from"`
	To         string     `json:"to"`
	Days       int        `json:"days"`
	FailedDays int        `json:"failedDays"`
	Rows       int64      `json:"rows"`
	NewAssets  int        `json:"newAssets"`
	Actions    int        `json:"actions"`
	Error      string     `json:"error"`
}

// feedDayJSON is a day that failed and waits for the next run.
type feedDayJSON struct {
	Date     string `json:"date"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error"`
}

// feedProviderJSON is a provider's next run and failed days.
type feedProviderJSON struct {
	Provider   string        `json:"provider"`
	NextRunAt  *time.Time    `json:"nextRunAt"`
	FailedDays []feedDayJSON `json:"failedDays"`
}

// feedStatusJSON is the answer of GET /api/v1/market-data/feeds.
type feedStatusJSON struct {
	Runs      []feedRunJSON      `json:"runs"`
	Providers []feedProviderJSON `json:"providers"`
}

// handleFeedList serves GET /api/v1/market-data/feeds: the feeds' last
// runs, newest first, and each provider's failed days and next run. Only
// the keys of administrators may read it (403 FORBIDDEN otherwise).
func (s *Server) handleFeedList(w http.ResponseWriter, req bunrouter.Request) error {
	ctx := req.Context()
	u, err := s.billing.UserByID(ctx, principal(ctx).UserID)
	if err != nil {
		return err
	}
	if !u.IsAdmin {
		return fmt.Errorf("server: %w", tradekit.Errorf(tradekit.ErrForbidden, "only administrators' keys may read the feeds' status"))
	}
	st := s.feeds
	runs, err := st.Runs(ctx, "", feedRunsShown)
	if err != nil {
		return err
	}
	next, err := st.NextRuns(ctx)
	if err != nil {
		return err
	}
	out := feedStatusJSON{Runs: make([]feedRunJSON, len(runs)), Providers: make([]feedProviderJSON, 0, len(feedProviders))}
	for i, r := range runs {
		out.Runs[i] = feedRunJSON{ID: r.ID.String(), Provider: r.Provider, StartedAt: r.StartedAt.UTC(), FinishedAt: r.FinishedAt,
			Outcome: r.Outcome, From: calendar.Date(r.From).String(), To: calendar.Date(r.To).String(), Days: r.Days,
			FailedDays: r.FailedDays, Rows: r.Rows, NewAssets: r.NewAssets, Actions: r.Actions, Error: r.Error}
		if r.FinishedAt != nil {
			t := r.FinishedAt.UTC()
			out.Runs[i].FinishedAt = &t
		}
	}
	for _, p := range feedProviders {
		days, err := st.FailedDays(ctx, p)
		if err != nil {
			return err
		}
		pj := feedProviderJSON{Provider: p, FailedDays: make([]feedDayJSON, len(days))}
		for i, d := range days {
			pj.FailedDays[i] = feedDayJSON{Date: calendar.Date(d.Date).String(), Attempts: d.Attempts, Error: d.Error}
		}
		if at, ok := next[p]; ok {
			pj.NextRunAt = &at
		}
		out.Providers = append(out.Providers, pj)
	}
	return s.writeData(w, out)
}
