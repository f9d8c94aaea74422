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
	// Month-end closes: the last bar of each (year, month).
	var monthSum [13]float64
	var monthN [13]int
	prevEnd := -1 // index of the previous month's last bar
	for t := 0; t < a.n; t++ {
		last := t == a.n-1 || !sameMonth(a.dates[t], a.dates[t+1])
		if !last {
			continue
		}
		if prevEnd >= 0 {
			m := a.dates[t].Month
			monthSum[m] += a.logc[t] - a.logc[prevEnd]
			monthN[m]++
		}
		prevEnd = t
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

	var daySum [7]float64
	var dayN [7]int
	for t := 1; t < a.n; t++ {
		d := a.dates[t].Weekday()
		daySum[d] += a.ret[t]
		dayN[d]++
	}
	bias := make(map[string]float64, 7)
	for d := time.Sunday; d <= time.Saturday; d++ {
		if dayN[d] > 0 {
			bias[strings.ToLower(d.String())] = daySum[d] / float64(dayN[d])
		}
	}
	return Seasonality{BestMonths: best, WorstMonths: worst, DayOfWeekBias: bias}
}

func sameMonth(x, y calendar.Date) bool { return x.Year == y.Year && x.Month == y.Month }
