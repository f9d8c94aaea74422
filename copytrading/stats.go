package copytrading

import (
	"math"

	"github.com/shopspring/decimal"

	"github.com/tradekit/tradekit/marketdata/calendar"
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
// documentation for their formulas.
type Statistics struct {
	TotalReturn    float64 // fraction since the first day, time-weighted
	SharpeRatio    float64 // annualised, risk-free rate 0; 0 with fewer than two returns or none varying
	MaxDrawdown    float64 // the deepest fall from a peak of the return index, a fraction ≤ 0
	MonthlyReturns []Month // oldest first, one per month with at least one return
	Days           int     // the daily returns behind the figures
}

// TradingDaysPerYear annualises the Sharpe ratio: √252 × mean / sd of
// daily returns.
const TradingDaysPerYear = 252

// Compute returns the statistics of the days, oldest first, one per date.
// A day whose previous day's equity is not positive has no return (the
// account was empty): it is skipped, and the chain of returns resumes
// from it. Compute is pure.
func Compute(days []Day) Statistics {
	s := Statistics{MonthlyReturns: []Month{}}
	rs := dailyReturns(days)
	s.Days = len(rs)
	if len(rs) == 0 {
		return s
	}
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
				s.MonthlyReturns = append(s.MonthlyReturns, Month{Month: month, Return: monthIndex - 1})
			}
			month, monthIndex = m, 1
		}
		monthIndex *= 1 + r.r
	}
	s.MonthlyReturns = append(s.MonthlyReturns, Month{Month: month, Return: monthIndex - 1})
	s.TotalReturn = index - 1
	if n := float64(len(rs)); n >= 2 {
		mean := sum / n
		var ss float64
		for _, r := range rs {
			ss += (r.r - mean) * (r.r - mean)
		}
		if sd := math.Sqrt(ss / (n - 1)); sd > 0 {
			s.SharpeRatio = mean / sd * math.Sqrt(TradingDaysPerYear)
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
