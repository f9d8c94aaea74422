package copytrading

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/calendar"
)

// Day is a portfolio's equity at the end of a day, and the money that
// entered it that day from outside (a deposit, positive) or left it (a
// withdrawal, negative). Trading moves no money in or out: buying and
// selling only turn cash into positions and back.
type Day struct {
	Date   calendar.Date
	Equity decimal.Decimal
	Flow   decimal.Decimal
}

// Month is a calendar month's time-weighted return, a fraction.
type Month struct {
	Month  string  `json:"month"` // "YYYY-MM"
	Return float64 `json:"return"`
}

// Statistics are a portfolio's performance figures; see the package
// documentation for their formulas. Every figure is rounded to
// [FigurePlaces] decimal places; a figure that does not exist is NaN.
type Statistics struct {
	TotalReturn    float64 // fraction since the first day, time-weighted; 0 without returns
	SharpeRatio    float64 // annualised, risk-free rate 0; NaN with fewer than two returns or none varying
	MaxDrawdown    float64 // the deepest fall from a peak of the return index, a fraction ≤ 0; NaN without returns
	MonthlyReturns []Month // oldest first, one per month with at least one return
	Days           int     // the daily returns behind the figures
}

// FigurePlaces is the number of decimal places of the figures of
// [Compute], as of every other fraction and ratio Tradekit reports
// (brokers.PctPlaces): enough for a basis point of a basis point, and
// free of the noise of binary floating point (0.0981943, not
// 0.09819429999999896).
const FigurePlaces = 8

// round returns x rounded half away from zero to [FigurePlaces] decimal
// places, through a decimal so that the result is the float64 nearest
// the rounded decimal; NaN stays NaN.
func round(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return x
	}
	return decimal.NewFromFloat(x).Round(FigurePlaces).InexactFloat64()
}

// TradingDaysPerYear annualises the Sharpe ratio: √252 × mean / sd of
// daily returns.
const TradingDaysPerYear = 252

// Compute returns the statistics of the days, oldest first, one per date.
// A day whose previous day's equity is not positive has no return (the
// account was empty): it is skipped, and the chain of returns resumes
// from it. Without returns (fewer than two days) the total return is 0
// and the maximum drawdown NaN; the Sharpe ratio is NaN with fewer than
// two returns, or when their standard deviation is 0 (a ratio over zero).
// The figures are rounded to [FigurePlaces] places. Compute is pure.
func Compute(days []Day) Statistics {
	s := Statistics{MonthlyReturns: []Month{}, SharpeRatio: math.NaN(), MaxDrawdown: math.NaN()}
	rs := dailyReturns(days)
	s.Days = len(rs)
	if len(rs) == 0 {
		return s
	}
	s.MaxDrawdown = 0
	index, peak := 1.0, 1.0
	month, monthIndex := "", 1.0
	var sum float64
	for _, r := range rs {
		index *= 1 + r.r
		sum += r.r
		peak = math.Max(peak, index)
		if dd := index/peak - 1; dd < s.MaxDrawdown {
			s.MaxDrawdown = dd
		}
		m := r.date.String()[:7]
		if m != month {
			if month != "" {
				s.MonthlyReturns = append(s.MonthlyReturns, Month{Month: month, Return: round(monthIndex - 1)})
			}
			month, monthIndex = m, 1
		}
		monthIndex *= 1 + r.r
	}
	s.MonthlyReturns = append(s.MonthlyReturns, Month{Month: month, Return: round(monthIndex - 1)})
	s.TotalReturn = round(index - 1)
	s.MaxDrawdown = round(s.MaxDrawdown)
	if n := float64(len(rs)); n >= 2 {
		mean := sum / n
		var ss float64
		for _, r := range rs {
			ss += (r.r - mean) * (r.r - mean)
		}
		if sd := math.Sqrt(ss / (n - 1)); sd > 0 {
			s.SharpeRatio = round(mean / sd * math.Sqrt(TradingDaysPerYear))
		}
	}
	return s
}

// dayReturn is one day's return.
type dayReturn struct {
	date calendar.Date
	r    float64
}

// dailyReturns returns r_t = (E_t − F_t) / E_{t−1} − 1 for every day t
// after the first whose previous equity is positive, in exact decimals
// rounded once to a float64.
func dailyReturns(days []Day) []dayReturn {
	out := make([]dayReturn, 0, len(days))
	for i := 1; i < len(days); i++ {
		prev := days[i-1].Equity
		if !prev.IsPositive() {
			continue
		}
		r, _ := days[i].Equity.Sub(days[i].Flow).Div(prev).Float64()
		out = append(out, dayReturn{date: days[i].Date, r: r - 1})
	}
	return out
}
