package feed

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/bulk"
)

// Runner fetches a provider's data for ranges of trading days and stores
// it. Set DB and Provider; the other fields are optional.
type Runner struct {
	DB       *bun.DB
	Provider Provider
	// Calendar gives the trading days; nil is NYSE's.
	Calendar *calendar.Calendar
	// Instance names who runs, in the run's record; "" is the host name.
	Instance string
	// Now is the clock of the records; nil is time.Now.
	Now func() time.Time
	// Progress, when set, is called after each day fetched and once the
	// data is stored. It must return quickly.
	Progress func(Progress)
}

// Progress tells how far a run has come.
type Progress struct {
	// Days is the number of days to fetch, DaysDone of them fetched.
	Days, DaysDone int
	// Bars is the number of bars fetched so far.
	Bars int64
}

// DayError is a day a run could not fetch or store: the next run fetches
// it again.
type DayError struct {
	Date calendar.Date
	Err  error
}

// Error implements error.
func (e *DayError) Error() string { return e.Date.String() + ": " + e.Err.Error() }

// Unwrap returns the reason.
func (e *DayError) Unwrap() error { return e.Err }

// Result summarises a run.
type Result struct {
	// RunID is the run's record, or uuid.Nil when there was nothing to do
	// (no run is recorded then).
	RunID uuid.UUID
	// Provider is the provider's name.
	Provider string
	// From and To are the range asked for.
	From, To calendar.Date
	// Days is the number of trading days in the range; Stored of them were
	// stored by earlier runs and not fetched again; Fetched were fetched
	// and stored by this run.
	Days, Stored, Fetched int
	// Failed lists the days not stored, oldest first.
	Failed []*DayError
	// Rows is the number of bars written (inserted, updated or found
	// unchanged); Invalid the bars refused by [marketdata.Price.Validate].
	Rows    int64
	Invalid int
	// NewAssets lists the symbols of the assets created.
	NewAssets []string
	// Actions is the number of splits and dividends inserted or changed.
	Actions int
	// Changed is the number of assets whose stored prices changed.
	Changed int

	dayRows map[calendar.Date]int64
}

// Unchanged reports whether the run changed nothing in the database.
func (r Result) Unchanged() bool {
	return r.Changed == 0 && r.Actions == 0 && len(r.NewAssets) == 0
}

// String is the run's summary line: "massive: 19 trading days from
// 2026-11-02 to 2026-11-27: 19 fetched, 0 already stored, 0 failed; 9500
// rows, 500 new assets, 2 actions".
func (r Result) String() string {
	s := fmt.Sprintf("%s: %d trading days from %s to %s: %d fetched, %d already stored, %d failed; %d rows, %d new assets, %d actions",
		r.Provider, r.Days, r.From, r.To, r.Fetched, r.Stored, len(r.Failed), r.Rows, len(r.NewAssets), r.Actions)
	if r.Invalid > 0 {
		s += fmt.Sprintf(", %d bars refused", r.Invalid)
	}
	if r.Unchanged() {
		s += " (nothing changed)"
	}
	return s
}

// Err returns an error naming the failed days, wrapping the first day's
// reason, or nil when every day was stored.
func (r Result) Err() error {
	if len(r.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("feed: %s: %d of %d days not stored (the next run fetches them again), first %w",
		r.Provider, len(r.Failed), r.Days-r.Stored, r.Failed[0])
}

// ToFetch returns the trading days of the range that no run of the
// provider has stored yet, oldest first.
func (r *Runner) ToFetch(ctx context.Context, from, to calendar.Date) ([]calendar.Date, error) {
	sessions, err := r.calendar().Sessions(from, to)
	if err != nil {
		return nil, err
	}
	if len(sessions) == 0 {
		return nil, nil
	}
	days, err := NewStore(r.DB).Days(ctx, r.Provider.Name(), sessions[0], sessions[len(sessions)-1])
	if err != nil {
		return nil, err
	}
	done := map[calendar.Date]bool{}
	for _, d := range days {
		if d.Status == DayDone {
			done[calendar.Date(d.Date)] = true
		}
	}
	return slices.DeleteFunc(sessions, func(d calendar.Date) bool { return done[d] }), nil
}

func (r *Runner) calendar() *calendar.Calendar {
	if r.Calendar != nil {
		return r.Calendar
	}
	c, _ := calendar.Lookup("XNYS")
	return c
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Run fetches and stores every trading day from from to to (both
// included) that no earlier run stored: no request goes out for weekends,
// holidays or days already stored. It creates the assets it does not know
// from the provider's reference data, stores the bars with
// [bulk.Import] (one file per day: a day is stored whole
// or not at all) and the splits and dividends of the days fetched with
// [marketdata.Store.SaveActionsCount]. A day that fails (the provider's
// error, no bars yet, a failed write) is recorded as failed and fetched
// again by the next run; the others are kept. The provider refusing the
// credentials ([ErrAuth]) or the request ([tradekit.ErrInvalid]) stops the
// run: the remaining days fail with that one error.
//
// Run returns the result and nil even when days failed (see
// [Result.Err]); an error for a bad range (wrapping [tradekit.ErrInvalid])
// or a database failure.
func (r *Runner) Run(ctx context.Context, from, to calendar.Date) (Result, error) {
	res := Result{Provider: r.Provider.Name(), From: from, To: to}
	if from.After(to) {
		return res, fmt.Errorf("feed: --from %s is after --to %s: %w", from, to, tradekit.ErrInvalid)
	}
	sessions, err := r.calendar().Sessions(from, to)
	if err != nil {
		return res, err
	}
	todo, err := r.ToFetch(ctx, from, to)
	if err != nil {
		return res, err
	}
	res.Days, res.Stored = len(sessions), len(sessions)-len(todo)
	if len(todo) == 0 {
		return res, nil
	}
	instance := r.Instance
	if instance == "" {
		instance, _ = os.Hostname()
	}
	st := NewStore(r.DB)
	rec := &RunRecord{ID: uuid.New(), Provider: res.Provider, Instance: instance, StartedAt: r.now().UTC(),
		Outcome: OutcomeRunning, From: marketdata.SQLDate(from), To: marketdata.SQLDate(to)}
	if err := st.startRun(ctx, rec); err != nil {
		return res, err
	}
	res.RunID = rec.ID
	runErr := r.run(ctx, todo, &res)
	// The records are written even when ctx is done: the run's work so far
	// and its failure are kept.
	wctx := context.WithoutCancel(ctx)
	failed := map[calendar.Date]error{}
	for _, f := range res.Failed {
		failed[f.Date] = f.Err
	}
	if runErr != nil {
		for _, d := range todo {
			if failed[d] == nil {
				failed[d] = runErr
				res.Failed = append(res.Failed, &DayError{Date: d, Err: runErr})
			}
		}
		slices.SortFunc(res.Failed, func(a, b *DayError) int { return a.Date.Compare(b.Date) })
	}
	now := r.now().UTC()
	for _, d := range todo {
		day := DayRecord{Provider: res.Provider, Date: marketdata.SQLDate(d), Status: DayDone, RunID: rec.ID, UpdatedAt: now,
			Rows: res.dayRows[d]}
		if err := failed[d]; err != nil {
			day.Status, day.Error = DayFailed, err.Error()
		}
		if err := st.saveDay(wctx, day); err != nil {
			return res, err
		}
	}
	res.Fetched = len(todo) - len(res.Failed)
	rec.FinishedAt = &now
	rec.Days, rec.FailedDays, rec.Rows, rec.NewAssets, rec.Actions, rec.Changed =
		res.Fetched, len(res.Failed), res.Rows, len(res.NewAssets), res.Actions, res.Changed
	switch {
	case len(res.Failed) == 0:
		rec.Outcome = OutcomeOK
	case res.Fetched > 0:
		rec.Outcome = OutcomePartial
	default:
		rec.Outcome = OutcomeFailed
	}
	if len(res.Failed) > 0 {
		rec.Error = res.Failed[0].Error()
	}
	if err := st.finishRun(wctx, rec); err != nil {
		return res, err
	}
	if runErr != nil && !isDayError(runErr) {
		return res, runErr
	}
	return res, nil
}

// dayFailure marks an error that fails the days of a run, not the run.
type dayFailure struct{ error }

func (e dayFailure) Unwrap() error { return e.error }

func isDayError(err error) bool {
	var d dayFailure
	return errors.As(err, &d)
}

// run fetches and stores the days todo. It fills res and returns an error
// that fails every day not already in res.Failed: a dayFailure for the
// provider's (actions) failure, else a database error.
func (r *Runner) run(ctx context.Context, todo []calendar.Date, res *Result) error {
	md := marketdata.NewStore(r.DB)
	assets, err := md.Assets(ctx)
	if err != nil {
		return err
	}
	exchanges, err := md.Exchanges(ctx)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	var symbols []string // the US stocks and ETFs, for the providers that need symbols
	usExchange := map[uuid.UUID]bool{}
	byMIC := map[string]uuid.UUID{}
	for _, e := range exchanges {
		byMIC[e.MIC] = e.ID
		if e.MIC == "XNYS" || e.MIC == "XNAS" {
			usExchange[e.ID] = true
		}
	}
	for _, a := range assets {
		known[a.Symbol] = true
		if usExchange[a.ExchangeID] && (a.Type == marketdata.Stock || a.Type == marketdata.ETF) {
			symbols = append(symbols, a.Symbol)
		}
	}

	dir, err := os.MkdirTemp("", "tradekit-feed-")
	if err != nil {
		return fmt.Errorf("feed: %w", err)
	}
	defer os.RemoveAll(dir)
	res.dayRows = map[calendar.Date]int64{}
	var fetched []calendar.Date
	unknown := map[string]string{} // a stored symbol not known yet → the provider's spelling
	var bars int64
	for i, day := range todo {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		got, err := r.Provider.DayBars(ctx, day, symbols)
		if err == nil && len(got) == 0 {
			err = errors.New("the provider has no bars for this day (not published yet?)")
		}
		if err == nil {
			var n int64
			n, err = writeDay(filepath.Join(dir, day.String()+".csv"), day, got, known, unknown, &res.Invalid)
			res.dayRows[day] = n
			bars += n
		}
		if err != nil {
			res.Failed = append(res.Failed, &DayError{Date: day, Err: err})
			if IsAuth(err) || errors.Is(err, tradekit.ErrInvalid) {
				// Every later request would be refused too (credentials,
				// or a request the provider or the client finds invalid):
				// the remaining days fail with this one error.
				return dayFailure{err}
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		} else {
			fetched = append(fetched, day)
		}
		if r.Progress != nil {
			r.Progress(Progress{Days: len(todo), DaysDone: i + 1, Bars: bars})
		}
	}
	if len(fetched) == 0 {
		return nil
	}
	if err := r.createAssets(ctx, unknown, byMIC, res); err != nil {
		return err
	}
	imp, err := bulk.Import(ctx, r.DB, dir, bulk.Options{
		NewAssets: marketdata.PriceImport{Type: marketdata.Stock, Currency: "USD", Exchange: "NYSE"}})
	res.Rows, res.Changed = imp.Rows, imp.Changed
	for _, f := range imp.Failed {
		day, perr := calendar.ParseDate(strings.TrimSuffix(filepath.Base(f.File), ".csv"))
		if perr != nil {
			return fmt.Errorf("feed: %w", f)
		}
		res.Failed = append(res.Failed, &DayError{Date: day, Err: f.Err})
		fetched = slices.DeleteFunc(fetched, func(d calendar.Date) bool { return d == day })
	}
	if err != nil && len(imp.Failed) == 0 {
		return err
	}
	if len(fetched) == 0 {
		return nil
	}
	n, err := r.saveActions(ctx, fetched[0], fetched[len(fetched)-1], symbols, res)
	if err != nil {
		return err
	}
	res.Actions = n
	return nil
}

// writeDay writes the valid bars of day as CSV to path, notes the symbols
// not in known (with the provider's spelling: Massive writes a preferred
// share KIMpL, which is stored as KIMPL), counts the refused bars in
// invalid, and returns the number of rows written.
func writeDay(path string, day calendar.Date, bars []Bar, known map[string]bool, unknown map[string]string, invalid *int) (int64, error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("feed: %w", err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("symbol,date,open,high,low,close,volume\n")
	seen := map[string]bool{}
	var n int64
	date := day.String()
	for _, b := range bars {
		sym := marketdata.NormalizeSymbol(b.Symbol)
		p := marketdata.Price{Date: day, Open: b.Open, High: b.High, Low: b.Low, Close: b.Close, Volume: b.Volume}
		if sym == "" || strings.ContainsAny(sym, ",\"\r\n") || seen[sym] || p.Validate() != nil {
			*invalid++
			continue
		}
		seen[sym] = true
		if !known[sym] {
			unknown[sym] = b.Symbol
		}
		w.WriteString(sym + "," + date + "," + b.Open.String() + "," + b.High.String() + "," + b.Low.String() + "," +
			b.Close.String() + "," + strconv.FormatInt(b.Volume, 10) + "\n")
		n++
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return 0, fmt.Errorf("feed: %w", err)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("feed: %w", err)
	}
	if n == 0 {
		os.Remove(path)
		return 0, errors.New("the provider's bars for this day are all invalid")
	}
	return n, nil
}

// createAssets creates the assets of the unknown symbols from the
// provider's reference data, in one transaction. A symbol the provider's
// reference does not know (or all of them, when it fails) gets an asset
// named after it: a US stock in USD on NYSE, as `import prices` makes.
func (r *Runner) createAssets(ctx context.Context, unknown map[string]string, byMIC map[string]uuid.UUID, res *Result) error {
	if len(unknown) == 0 {
		return nil
	}
	syms := make([]string, 0, len(unknown))
	for s := range unknown {
		syms = append(syms, s)
	}
	slices.Sort(syms)
	raw := make([]string, len(syms))
	for i, s := range syms {
		raw[i] = unknown[s]
	}
	info := map[string]AssetInfo{}
	refs, err := r.Provider.Assets(ctx, raw)
	if err != nil && IsAuth(err) {
		return dayFailure{err}
	}
	for _, a := range refs {
		info[marketdata.NormalizeSymbol(a.Symbol)] = a
	}
	return r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		st := marketdata.NewStore(tx)
		for _, s := range syms {
			ref := info[s]
			a := marketdata.Asset{Symbol: s, Name: strings.TrimSpace(ref.Name), Type: ref.Type, Currency: ref.Currency,
				IsActive: true, ExchangeID: byMIC[ref.MIC]}
			if a.Name == "" {
				a.Name = s
			}
			if !a.Type.IsValid() {
				a.Type = marketdata.Stock
			}
			if len(a.Currency) != 3 {
				a.Currency = "USD"
			}
			if a.ExchangeID == uuid.Nil {
				a.ExchangeID = byMIC["XNYS"]
			}
			if err := st.SaveAsset(ctx, &a); err != nil {
				return err
			}
			res.NewAssets = append(res.NewAssets, s)
		}
		return nil
	})
}

// saveActions fetches the actions from from to to and stores those of
// known assets; it returns how many it inserted or changed.
func (r *Runner) saveActions(ctx context.Context, from, to calendar.Date, symbols []string, res *Result) (int, error) {
	acts, err := r.Provider.Actions(ctx, from, to, symbols)
	if err != nil {
		return 0, dayFailure{fmt.Errorf("splits and dividends: %w", err)}
	}
	md := marketdata.NewStore(r.DB)
	assets, err := md.Assets(ctx)
	if err != nil {
		return 0, err
	}
	ids := map[string]uuid.UUID{}
	for _, a := range assets {
		ids[a.Symbol] = a.ID
	}
	var out []marketdata.Action
	for _, a := range acts {
		id, ok := ids[marketdata.NormalizeSymbol(a.Symbol)]
		if !ok {
			continue // an asset we do not hold
		}
		ma := marketdata.Action{AssetID: id, Date: a.Date, Kind: a.Kind, Value: a.Value}
		if ma.Validate() != nil {
			continue
		}
		out = append(out, ma)
	}
	var n int
	err = r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		var err error
		n, err = marketdata.NewStore(tx).SaveActionsCount(ctx, out)
		return err
	})
	return n, err
}
