// Package copytrading lets users publish a portfolio as a leader profile,
// follow leaders, mirror their trades (auto-sync), and publish strategies.
// It sits above packages brokers and marketdata, which never import it.
//
// # Statistics
//
// A leader's figures come from the portfolio's daily equity as its
// broker reports it (package brokers/connect keeps it), never from the
// user's word: a profile is verified when its portfolio belongs to a
// broker connection. The demo leaders ([LoadDemoLeaders]) are not: their
// histories are simulated over the synthetic demo prices, and their bios
// say so.
//
// Money moved in or out of the account (deposits, withdrawals) is not a
// return. Returns are time-weighted: with E_t the equity at the end of day
// t and F_t the net flow of day t (deposits positive, withdrawals
// negative), counted at the day's end, the return of day t is
//
//	r_t = (E_t − F_t) / E_{t−1} − 1
//
// for every day after the first whose previous equity is positive; a day
// after an empty account has no return. Over the days with a return:
//
//	totalReturn    = ∏ (1 + r_t) − 1, a fraction (0.1 is 10 %)
//	sharpeRatio    = mean(r) / sd(r) × √252, sd with n − 1, risk-free rate 0;
//	                 0 with fewer than two returns or when sd is 0
//	maxDrawdown    = min over t of I_t / max_{s ≤ t} I_s − 1, with
//	                 I_t = ∏_{s ≤ t} (1 + r_s) and I_0 = 1: a fraction ≤ 0
//	monthlyReturns = ∏ (1 + r_t) − 1 over the days t of each calendar month
//
// Daily returns are computed in exact decimals and rounded once to a
// float64; the figures are float64.
package copytrading
