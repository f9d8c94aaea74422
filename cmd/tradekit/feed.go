package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata/feed"
	"github.com/tradekit/tradekit/marketdata/feed/alpacadata"
	"github.com/tradekit/tradekit/marketdata/feed/massive"
)

// feedUsage is the help of `tradekit feed`.
const feedUsage = `usage: tradekit feed <subcommand> [flags]

subcommands:
  run --provider massive|alpaca --from DATE [--to DATE] [--rate N/min] [--db DSN]
         fetch and store the daily bars, new assets, splits and dividends of every trading day of the range
  status [--provider NAME] [--limit N] [--db DSN]
         the last runs, the days that failed and the next run planned by serve --feed

Keys come from the environment: TRADEKIT_MASSIVE_API_KEY; TRADEKIT_ALPACA_KEY_ID and
TRADEKIT_ALPACA_SECRET_KEY. TRADEKIT_MASSIVE_URL and TRADEKIT_ALPACA_DATA_URL change the base URLs.
See docs/feeds.md.`

// feedProviders lists the providers by name.
const feedProviders = "massive or alpaca"

// feedCmd runs `tradekit feed`.
func (e *env) feedCmd(ctx context.Context, args []string) error {
	return e.runSubcommand(ctx, "feed", "feed", feedUsage, args,
		subcommand{"run", e.feedRun},
		subcommand{"status", e.feedStatus})
}

// feedProvider returns the client of the provider name, configured from
// the environment, with at most perMinute requests a minute when
// positive; observe, when set, gets each request's duration and status.
func (e *env) feedProvider(name string, perMinute int, observe func(time.Duration, int)) (feed.Provider, error) {
	switch name {
	case "massive":
		return massive.New(massive.Config{BaseURL: e.getenv("TRADEKIT_MASSIVE_URL"), APIKey: e.getenv("TRADEKIT_MASSIVE_API_KEY"),
			PerMinute: perMinute, Observe: observe})
	case "alpaca":
		return alpacadata.New(alpacadata.Config{BaseURL: e.getenv("TRADEKIT_ALPACA_DATA_URL"), KeyID: e.getenv("TRADEKIT_ALPACA_KEY_ID"),
			SecretKey: e.getenv("TRADEKIT_ALPACA_SECRET_KEY"), PerMinute: perMinute, Observe: observe})
	case "":
		return nil, fmt.Errorf("--provider is required: %s", feedProviders)
	}
	return nil, fmt.Errorf("--provider must be %s, got %q", feedProviders, name)
}

// parseRate parses --rate: "N/min" or "N", N requests a minute; "" is no
// limit.
func parseRate(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(s), "/min"))
	if err != nil || n <= 0 || n > 60000 {
		return 0, fmt.Errorf("--rate must be N/min with N from 1 to 60000 requests a minute, got %q", s)
	}
	return n, nil
}

// lastClosedSession returns the latest session of cal whose close has
// passed at now.
func lastClosedSession(cal *calendar.Calendar, now time.Time) (calendar.Date, error) {
	loc, err := cal.Location()
	if err != nil {
		return calendar.Date{}, err
	}
	local := now.In(loc)
	d := calendar.DateOf(local)
	if cal.IsTradingDay(d) {
		if close, ok := cal.CloseTime(d); ok && local.Format("15:04") >= close {
			return d, nil
		}
	}
	return cal.Previous(d), nil
}

// feedRun runs `tradekit feed run`.
func (e *env) feedRun(ctx context.Context, args []string) error {
	fs, dsn := e.flags("feed run", "--provider massive|alpaca --from DATE [--to DATE] [--rate N/min] [--db DSN]",
		"Fetch the daily bars of every trading day (NYSE calendar) from --from to --to from the provider, create the\n"+
			"assets it trades that the database does not hold, and store the bars, splits and dividends as 'tradekit\n"+
			"import' does. Days stored by an earlier run are skipped; a day that fails is reported and fetched again by\n"+
			"the next run. Exits non-zero when a day failed.")
	provider := fs.String("provider", "", "the data `PROVIDER`: massive or alpaca")
	fromFlag := fs.String("from", "", "the first `DATE` to fetch, YYYY-MM-DD")
	toFlag := fs.String("to", "", "the last `DATE` to fetch, YYYY-MM-DD (default the last session that has closed)")
	rateFlag := fs.String("rate", "", "at most `N/min` requests a minute (Massive's free plan: 5/min); default no client-side\n"+
		"limit, the provider's 429 answers and their Retry-After being honoured")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	rate, err := parseRate(*rateFlag)
	if err != nil {
		return err
	}
	p, err := e.feedProvider(*provider, rate, nil)
	if err != nil {
		return err
	}
	if *fromFlag == "" {
		return errors.New("--from is required: the first date to fetch, YYYY-MM-DD")
	}
	from, err := calendar.ParseDate(*fromFlag)
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	cal, _ := calendar.Lookup("XNYS")
	to, err := lastClosedSession(cal, time.Now())
	if err != nil {
		return err
	}
	if *toFlag != "" {
		if to, err = calendar.ParseDate(*toFlag); err != nil {
			return fmt.Errorf("--to: %w", err)
		}
	}
	if from.After(to) {
		return fmt.Errorf("--from %s is after --to %s", from, to)
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	r := &feed.Runner{DB: db, Provider: p, Calendar: cal, Instance: "cli"}
	bar := newProgressBar(e.stdout, start)
	if bar != nil {
		r.Progress = func(pr feed.Progress) {
			if bar.due() {
				bar.draw(float64(pr.DaysDone)/float64(max(pr.Days, 1)), pr.Bars, fmt.Sprintf("%d/%d days  %d bars", pr.DaysDone, pr.Days, pr.Bars))
			}
		}
	}
	res, err := r.Run(ctx, from, to)
	bar.clear()
	if err != nil {
		return err
	}
	// Each reason is said once, with the days it failed.
	for i := 0; i < len(res.Failed); {
		j := i + 1
		for j < len(res.Failed) && res.Failed[j].Err.Error() == res.Failed[i].Err.Error() {
			j++
		}
		days := res.Failed[i].Date.String()
		if j-i > 1 {
			days = fmt.Sprintf("%s to %s (%d days)", days, res.Failed[j-1].Date, j-i)
		}
		fmt.Fprintf(e.stderr, "tradekit: %s: not stored, the next run fetches it again: %v\n", days, res.Failed[i].Err)
		i = j
	}
	fmt.Fprintf(e.stdout, "%s in %s\n", res, time.Since(start).Round(time.Millisecond))
	if res.Changed > 0 {
		e.buildProfilesAfterImport(ctx, db, nil)
	}
	return res.Err()
}

// feedStatus runs `tradekit feed status`.
func (e *env) feedStatus(ctx context.Context, args []string) error {
	fs, dsn := e.flags("feed status", "[--provider NAME] [--limit N] [--db DSN]",
		"Print the last runs of the feeds (newest first), the days that failed and wait for the next run, and the next\n"+
			"run that serve --feed plans.")
	provider := fs.String("provider", "", "only this `PROVIDER`'s runs: massive or alpaca")
	limit := fs.Int("limit", 10, "print the last `N` runs")
	if err := e.parse(fs, args); err != nil {
		return err
	}
	if *limit <= 0 || *limit > 1000 {
		return fmt.Errorf("--limit must be from 1 to 1000, got %d", *limit)
	}
	if *provider != "" && *provider != "massive" && *provider != "alpaca" {
		return fmt.Errorf("--provider must be %s, got %q", feedProviders, *provider)
	}
	db, err := e.open(ctx, *dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	st := feed.NewStore(db)
	runs, err := st.Runs(ctx, *provider, *limit)
	if err != nil {
		return err
	}
	next, err := st.NextRuns(ctx)
	if err != nil {
		return err
	}
	if len(runs) == 0 {
		fmt.Fprintln(e.stdout, "no feed has run yet")
	} else {
		tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "STARTED\tPROVIDER\tOUTCOME\tRANGE\tDAYS\tFAILED\tROWS\tNEW ASSETS\tACTIONS\tINSTANCE\tERROR")
		for _, r := range runs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s..%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\n", r.StartedAt.UTC().Format(time.RFC3339), r.Provider,
				r.Outcome, calendar.Date(r.From), calendar.Date(r.To), r.Days, r.FailedDays, r.Rows, r.NewAssets, r.Actions,
				r.Instance, oneLine(r.Error))
		}
		tw.Flush()
	}
	for _, name := range []string{"massive", "alpaca"} {
		if *provider != "" && *provider != name {
			continue
		}
		failed, err := st.FailedDays(ctx, name)
		if err != nil {
			return err
		}
		for _, d := range failed {
			fmt.Fprintf(e.stdout, "%s: %s failed (%s), fetched again by the next run: %s\n", name, calendar.Date(d.Date),
				plural(d.Attempts, "attempt", "attempts"), oneLine(d.Error))
		}
		if at, ok := next[name]; ok {
			fmt.Fprintf(e.stdout, "%s: next run %s\n", name, at.Format(time.RFC3339))
		}
	}
	return nil
}
