package profiles

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/tradekit/tradekit/calendar"
)

// seasonality finds the best and worst calendar months and the weekday
// bias (see the package documentation).
func seasonality(a *asset, cfg Config) Seasonality {
	var st seasonSums
	st.addDays(a, 0)
	return st.seasonality(a, cfg)
}

// seasonSums are the sums behind [seasonality] over a's bars up to day
// upTo: the monthly log returns of the calendar months completed before
// upTo's month (prevEnd the index of the last month's last bar, -1 while
// none), and the daily log returns by weekday.
type seasonSums struct {
	monthSum [13]float64
	monthN   [13]int
	daySum   [7]float64
	dayN     [7]int
	prevEnd  int
	upTo     int // the last bar counted; -1 before any
}

// addDays counts a's bars from index from (upTo+1 of the sums so far, or 0
// with zero sums) to the last.
func (st *seasonSums) addDays(a *asset, from int) {
	if from == 0 {
		*st = seasonSums{prevEnd: -1, upTo: -1}
	}
	for t := from; t < a.n; t++ {
		if t > 0 {
			d := a.dates[t].Weekday()
			st.daySum[d] += a.ret[t]
			st.dayN[d]++
		}
		// A bar is a month's last once the next bar is in another month.
		if t > 0 && !sameMonth(a.dates[t-1], a.dates[t]) {
			st.endMonth(a, t-1)
		}
		st.upTo = t
	}
}

// endMonth counts the month whose last bar is t.
func (st *seasonSums) endMonth(a *asset, t int) {
	if st.prevEnd >= 0 {
		m := a.dates[t].Month
		st.monthSum[m] += a.logc[t] - a.logc[st.prevEnd]
		st.monthN[m]++
	}
	st.prevEnd = t
}

// seasonality returns the seasonality of a from the sums, which must be
// up to a's last bar: the last (partial) month is counted here.
func (st seasonSums) seasonality(a *asset, cfg Config) Seasonality {
	monthSum, monthN := st.monthSum, st.monthN
	if st.prevEnd >= 0 {
		m := a.dates[a.n-1].Month
		monthSum[m] += a.logc[a.n-1] - a.logc[st.prevEnd]
		monthN[m]++
	}
	type mean struct {
		m time.Month
		v float64
	}
	var means []mean
	for m := time.January; m <= time.December; m++ {
		if monthN[m] > 0 {
			means = append(means, mean{m, monthSum[m] / float64(monthN[m])})
		}
	}
	slices.SortStableFunc(means, func(x, y mean) int { return cmp.Compare(y.v, x.v) })
	k := min(cfg.Months, len(means)/2)
	best := make([]string, 0, k)
	worst := make([]string, 0, k)
	for i := 0; i < k; i++ {
		best = append(best, means[i].m.String())
		worst = append(worst, means[len(means)-1-i].m.String())
	}

	daySum, dayN := st.daySum, st.dayN
	bias := make(map[string]float64, 7)
	for d := time.Sunday; d <= time.Saturday; d++ {
		if dayN[d] > 0 {
			bias[strings.ToLower(d.String())] = daySum[d] / float64(dayN[d])
		}
	}
	return Seasonality{BestMonths: best, WorstMonths: worst, DayOfWeekBias: bias}
}

func sameMonth(x, y calendar.Date) bool { return x.Year == y.Year && x.Month == y.Month }
