package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/calendar"
	"github.com/tradekit/tradekit/examples/internal/universe"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "backtest:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("backtest", flag.ContinueOnError)
	index := fs.String("index", "TKXUS15", "demo index whose point-in-time members to trade")
	symbols := fs.String("symbols", "", "demo symbols to trade instead, comma-separated")
	csvPath := fs.String("csv", "", "daily bars of one asset from a CSV file instead of the demo data")
	var s backtest.Strategy
	fs.StringVar(&s.Entry, "entry", "crossover(sma(close, 50), sma(close, 200))", "formula: enter when non-zero")
	fs.StringVar(&s.Exit, "exit", "crossunder(sma(close, 50), sma(close, 200))", "formula: leave when non-zero")
	fs.IntVar(&s.MaxPositions, "max-positions", 5, "most positions held at once")
	fs.Float64Var(&s.PositionPct, "position-pct", 0, "size of a position, percent of equity (default 100 / max-positions)")
	fs.Float64Var(&s.StopLossPct, "stop-loss", 0, "stop-loss, percent below the entry price (0: none)")
	fs.Float64Var(&s.TakeProfitPct, "take-profit", 0, "take-profit, percent above the entry price (0: none)")
	fs.Float64Var(&s.CommissionBps, "commission", 5, "commission, basis points of each fill's value")
	fs.Float64Var(&s.SlippageBps, "slippage", 5, "slippage, basis points against each fill")
	from := fs.String("from", "", "first day traded, YYYY-MM-DD (default the first bar)")
	to := fs.String("to", "", "last day traded, YYYY-MM-DD (default the last bar)")
	png := fs.String("png", "backtest.png", "where to write the equity and drawdown chart (\"\": nowhere)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c, err := s.Compile()
	if err != nil {
		return err
	}
	var u *universe.Universe
	switch {
	case *csvPath != "":
		u, err = universe.CSV(*csvPath)
	case *symbols != "":
		u, err = universe.Demo("", *symbols)
	default:
		u, err = universe.Demo(*index, "")
	}
	if err != nil {
		return err
	}
	cfg := backtest.Config{Days: u.Days}
	for _, d := range []struct {
		flag, v string
		to      *calendar.Date
	}{{"-from", *from, &cfg.From}, {"-to", *to, &cfg.To}} {
		if d.v != "" {
			if *d.to, err = calendar.ParseDate(d.v); err != nil {
				return fmt.Errorf("%s: %w", d.flag, err)
			}
		}
	}
	ctx := context.Background()
	res, err := backtest.Run(ctx, c, u.Assets, cfg)
	if err != nil {
		return err
	}
	hold, err := backtest.BuyAndHold(ctx, c, u.Assets, cfg)
	if err != nil {
		return err
	}

	days := "the assets' dates"
	if u.Calendar != "" {
		days = u.Calendar + " sessions"
	}
	fmt.Fprintf(out, "%s\n%s to %s, %d days (%s)", u.Name, res.Stats.Start, res.Stats.End, len(res.Dates), days)
	if *csvPath == "" {
		fmt.Fprint(out, "; demo data: SYNTHETIC prices")
	}
	fmt.Fprintf(out, "\nentry %s\nexit  %s\n", c.Entry, c.Exit)
	fmt.Fprintf(out, "%d positions of %.4g %% · stop-loss %g %% · take-profit %g %% · costs %g + %g bps\nstrategy hash %s\n\n",
		c.MaxPositions, c.PositionPct, c.StopLossPct, c.TakeProfitPct, c.CommissionBps, c.SlippageBps, c.Hash())
	tearsheet(out, res.Stats, hold.Stats)
	if *png != "" {
		if err := writeChart(*png, res, hold); err != nil {
			return err
		}
		fmt.Fprintf(out, "\nwrote %s: equity and drawdown\n", *png)
	}
	return nil
}

// tearsheet prints the strategy's figures beside the benchmark's.
func tearsheet(out io.Writer, s, h backtest.Stats) {
	fmt.Fprintf(out, "%-16s %12s %12s\n", "", "strategy", "buy & hold")
	pct := func(v float64) string { return num(100*v, "%.1f %%") }
	for _, row := range []struct {
		label string
		s, h  string
	}{
		{"final equity", num(s.FinalEquity, "%.0f"), num(h.FinalEquity, "%.0f")},
		{"total return", pct(s.TotalReturn), pct(h.TotalReturn)},
		{"CAGR", pct(s.CAGR), pct(h.CAGR)},
		{"volatility", pct(s.Volatility), pct(h.Volatility)},
		{"Sharpe", num(s.Sharpe, "%.2f"), num(h.Sharpe, "%.2f")},
		{"Sortino", num(s.Sortino, "%.2f"), num(h.Sortino, "%.2f")},
		{"Calmar", num(s.Calmar, "%.2f"), num(h.Calmar, "%.2f")},
		{"max drawdown", pct(s.MaxDrawdown), pct(h.MaxDrawdown)},
		{"drawdown days", fmt.Sprint(s.MaxDrawdownDays), fmt.Sprint(h.MaxDrawdownDays)},
		{"trades", fmt.Sprint(s.Trades), fmt.Sprint(h.Trades)},
		{"win rate", pct(s.WinRate), pct(h.WinRate)},
		{"profit factor", num(s.ProfitFactor, "%.2f"), num(h.ProfitFactor, "%.2f")},
		{"expectancy", num(s.Expectancy, "%.0f"), num(h.Expectancy, "%.0f")},
		{"exposure", pct(s.Exposure), pct(h.Exposure)},
		{"turnover", num(s.Turnover, "%.2f /yr"), num(h.Turnover, "%.2f /yr")},
	} {
		fmt.Fprintf(out, "%-16s %12s %12s\n", row.label, row.s, row.h)
	}
}

// num formats v, or "–" when it is not finite (a ratio over zero).
func num(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "–"
	}
	return fmt.Sprintf(format, v)
}
