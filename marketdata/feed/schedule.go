package feed

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/calendar"
)

// Scheduler runs a provider's feed once a day after the close, by the
// exchange calendar, and backfills missed days when it starts. Any number
// of instances may run one on a database: a lease lets one run at a time,
// and a day stored by one is not fetched again by another.
type Scheduler struct {
	// Runner runs the feed; its Calendar gives the sessions and its
	// Instance names the lease's holder (it must differ between processes).
	Runner *Runner
	// At is the time of day, in the calendar's time zone, of the daily
	// run: 18 hours for 18:00.
	At time.Duration
	// Backfill caps how far back, in calendar days, a run fetches the
	// days missed since the last stored bar (and the failed ones).
	Backfill int
	// LeaseTTL is how long a run's lease lasts unless renewed (every
	// third of it while the run lasts); 0 is 5 minutes.
	LeaseTTL time.Duration
	// Sleep waits d or until ctx is done; nil sleeps on a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Ran, when set, is called after each run that had days to fetch,
	// with its result, error and duration.
	Ran func(res Result, err error, d time.Duration)
}

// Validate checks the schedule. The error wraps [tradekit.ErrInvalid].
func (s *Scheduler) Validate() error {
	switch {
	case s.At < 0 || s.At >= 24*time.Hour:
		return fmt.Errorf("feed: the daily run's time %s is not within a day: %w", s.At, tradekit.ErrInvalid)
	case s.Backfill < 1 || s.Backfill > 3660:
		return fmt.Errorf("feed: backfill of %d days: want 1 to 3660: %w", s.Backfill, tradekit.ErrInvalid)
	case s.Runner == nil || s.Runner.DB == nil || s.Runner.Provider == nil || s.Runner.Instance == "":
		return fmt.Errorf("feed: a scheduler needs a Runner with a DB, a Provider and an Instance: %w", tradekit.ErrInvalid)
	}
	return nil
}

// Next returns the time of the first daily run after now: At on the next
// session (today's, if At has not passed yet).
func (s *Scheduler) Next(now time.Time) (time.Time, error) {
	cal := s.Runner.calendar()
	loc, err := cal.Location()
	if err != nil {
		return time.Time{}, err
	}
	d := calendar.DateOf(now.In(loc))
	for {
		if cal.IsTradingDay(d) {
			if t := s.runTime(d, loc); t.After(now) {
				return t, nil
			}
		}
		d = d.AddDays(1)
	}
}

func (s *Scheduler) runTime(d calendar.Date, loc *time.Location) time.Time {
	h, m := int(s.At/time.Hour), int(s.At%time.Hour/time.Minute)
	return time.Date(d.Year, d.Month, d.Day, h, m, 0, 0, loc)
}

// Range returns the days a run at now fetches: from the day after the
// last stored bar (or the earliest failed day, if earlier), but no further
// back than Backfill days, to the last session whose run time has passed.
// ok is false when there is none.
func (s *Scheduler) Range(ctx context.Context, now time.Time) (from, to calendar.Date, ok bool, err error) {
	cal := s.Runner.calendar()
	loc, err := cal.Location()
	if err != nil {
		return from, to, false, err
	}
	today := calendar.DateOf(now.In(loc))
	to = today
	if !cal.IsTradingDay(to) || now.Before(s.runTime(to, loc)) {
		to = cal.Previous(to)
	}
	floor := today.AddDays(-s.Backfill)
	st := NewStore(s.Runner.DB)
	from = floor
	last, has, err := st.LastBarDate(ctx)
	if err != nil {
		return from, to, false, err
	}
	if has && last.AddDays(1).After(floor) {
		from = last.AddDays(1)
	}
	failed, err := st.FailedDays(ctx, s.Runner.Provider.Name())
	if err != nil {
		return from, to, false, err
	}
	for _, d := range failed {
		if day := calendar.Date(d.Date); !day.Before(floor) && day.Before(from) {
			from = day
			break // oldest first
		}
	}
	return from, to, !from.After(to), nil
}

// RunOnce takes the lease of the provider's feed and runs the feed over
// [Scheduler.Range] at now. held is false when another instance holds the
// lease (nothing is done). A run with no day left to fetch records
// nothing.
func (s *Scheduler) RunOnce(ctx context.Context, now time.Time) (res Result, held bool, err error) {
	ttl := s.LeaseTTL
	if ttl <= 0 {
		ttl = 5 * time.Minute
	}
	st := NewStore(s.Runner.DB)
	name := "feed:" + s.Runner.Provider.Name()
	holder := s.Runner.Instance
	held, err = st.Acquire(ctx, name, holder, time.Now(), ttl)
	if err != nil || !held {
		return res, held, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	renewed := make(chan struct{})
	defer func() {
		// The renewal stops before the release, which it cannot undo.
		cancel(nil)
		<-renewed
		st.Release(context.WithoutCancel(ctx), name, holder)
	}()
	go func() {
		defer close(renewed)
		t := time.NewTicker(ttl / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if ok, err := st.Acquire(ctx, name, holder, time.Now(), ttl); err == nil && !ok {
					cancel(fmt.Errorf("feed: lost the lease %s", name))
					return
				}
			}
		}
	}()
	from, to, ok, err := s.Range(ctx, now)
	if err != nil || !ok {
		return res, true, err
	}
	start := time.Now()
	res, err = s.Runner.Run(ctx, from, to)
	if res.RunID != uuid.Nil && s.Ran != nil {
		s.Ran(res, err, time.Since(start))
	}
	return res, true, err
}

// Run backfills at once, then runs the feed daily at At until ctx is
// done, recording each next run planned (see [Store.NextRuns]). A failed
// run is reported to Ran and the schedule goes on: its days are fetched
// again by the next run. Run returns ctx's error.
func (s *Scheduler) Run(ctx context.Context) error {
	if err := s.Validate(); err != nil {
		return err
	}
	sleep := s.Sleep
	if sleep == nil {
		sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	st := NewStore(s.Runner.DB)
	for {
		now := s.Runner.now()
		// A run recorded has been reported by RunOnce; an error before it
		// (the lease, the range) is reported here.
		if res, _, err := s.RunOnce(ctx, now); err != nil && res.RunID == uuid.Nil && s.Ran != nil && ctx.Err() == nil {
			s.Ran(Result{Provider: s.Runner.Provider.Name()}, err, 0)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		next, err := s.Next(s.Runner.now())
		if err != nil {
			return err
		}
		if err := st.SetNextRun(ctx, s.Runner.Provider.Name(), next, s.Runner.now()); err != nil && s.Ran != nil {
			s.Ran(Result{Provider: s.Runner.Provider.Name()}, err, 0)
		}
		if err := sleep(ctx, next.Sub(s.Runner.now())); err != nil {
			return err
		}
	}
}
