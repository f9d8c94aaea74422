package indicators

import (
	"fmt"
	"time"
)

// Bar is one OHLCV bar. Date is the trading day for daily bars; for the
// bars made by [Weekly] and [Monthly] it is the date of the last daily bar
// in the period (the last trading day, not the calendar end).
type Bar struct {
	Date                           time.Time
	Open, High, Low, Close, Volume float64
}

// Weekly resamples daily bars into ISO 8601 weeks (Monday to Sunday, the
// week-numbering year of [time.Time.ISOWeek], so 2021-01-01 falls in week
// 53 of 2020): the first open, the highest high, the lowest low, the last
// close and the summed volume of the days in the week, dated on the last
// day present. Weeks without bars are absent. Dates are read in their own
// location. daily must be in strictly ascending date order; Weekly panics
// otherwise. The result is a new slice; daily is not modified.
func Weekly(daily []Bar) []Bar {
	return resample("Weekly", daily, func(t time.Time) int {
		y, w := t.ISOWeek()
		return y*100 + w
	})
}

// Monthly resamples daily bars into calendar months, as [Weekly] does into
// weeks: first open, highest high, lowest low, last close, summed volume,
// dated on the last day present in the month. daily must be in strictly
// ascending date order; Monthly panics otherwise.
func Monthly(daily []Bar) []Bar {
	return resample("Monthly", daily, func(t time.Time) int {
		return t.Year()*100 + int(t.Month())
	})
}

func resample(name string, daily []Bar, period func(time.Time) int) []Bar {
	var out []Bar
	key := 0
	for i, b := range daily {
		if i > 0 && !b.Date.After(daily[i-1].Date) {
			panic(fmt.Sprintf("indicators: %s: bar %d (%s) is not after bar %d (%s)",
				name, i, b.Date.Format(time.DateOnly), i-1, daily[i-1].Date.Format(time.DateOnly)))
		}
		k := period(b.Date)
		if len(out) == 0 || k != key {
			out = append(out, b)
			key = k
			continue
		}
		cur := &out[len(out)-1]
		cur.Date = b.Date
		if b.High > cur.High {
			cur.High = b.High
		}
		if b.Low < cur.Low {
			cur.Low = b.Low
		}
		cur.Close = b.Close
		cur.Volume += b.Volume
	}
	return out
}

// Columns splits bars into the float64 columns the indicator functions
// take, oldest first.
func Columns(bars []Bar) (open, high, low, close, volume []float64) {
	n := len(bars)
	open, high, low, close, volume = make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	for i, b := range bars {
		open[i], high[i], low[i], close[i], volume[i] = b.Open, b.High, b.Low, b.Close, b.Volume
	}
	return open, high, low, close, volume
}
