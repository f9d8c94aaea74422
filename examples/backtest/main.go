package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/marketdata"
	"github.com/tradekit/tradekit/marketdata/demo"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "backtest:", err)
		os.Exit(1)
	}
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("backtest", flag.ContinueOnError)
	symbol := fs.String("symbol", "", "demo asset to test (default: the first demo stock)")
	csvPath := fs.String("csv", "", "daily bars from a CSV file instead of the demo data")
	entry := fs.String("entry", "crossover(sma(close, 50), sma(close, 200))", "formula: buy when non-zero")
	exit := fs.String("exit", "crossunder(sma(close, 50), sma(close, 200))", "formula: sell when non-zero")
	cost := fs.Float64("cost", 5, "cost of each trade in basis points of its value")
	if err := fs.Parse(args); err != nil {
		return err
	}
	name, ps, err := load(*csvPath, *symbol)
	if err != nil {
		return err
	}
	bars := marketdata.PriceSeries(ps)

	entryExpr, err := formula.Parse(*entry)
	if err != nil {
		return fmt.Errorf("-entry: %w", err)
	}
	exitExpr, err := formula.Parse(*exit)
	if err != nil {
		return fmt.Errorf("-exit: %w", err)
	}
	enter, err := entryExpr.Eval(bars)
	if err != nil {
		return err
	}
	leave, err := exitExpr.Eval(bars)
	if err != nil {
		return err
	}

	strat := Backtest(bars.Open, bars.Close, enter, leave, *cost/1e4)
	hold := Backtest(bars.Open, bars.Close, startSignal(len(bars.Close)), make([]float64, len(bars.Close)), *cost/1e4)
	fmt.Fprintf(out, "%s: %d daily bars, %s to %s\n", name, len(ps), ps[0].Date, ps[len(ps)-1].Date)
	fmt.Fprintf(out, "entry %s\nexit  %s\n\n", entryExpr, exitExpr)
	fmt.Fprintf(out, "%-14s %10s %10s\n", "", "strategy", "buy & hold")
	for _, row := range []struct {
		label string
		s, h  float64
		pct   bool
	}{
		{"total return", strat.TotalReturn, hold.TotalReturn, true},
		{"CAGR", strat.CAGR, hold.CAGR, true},
		{"volatility", strat.Volatility, hold.Volatility, true},
		{"Sharpe", strat.Sharpe, hold.Sharpe, false},
		{"max drawdown", strat.MaxDrawdown, hold.MaxDrawdown, true},
		{"exposure", strat.Exposure, hold.Exposure, true},
	} {
		if row.pct {
			fmt.Fprintf(out, "%-14s %9.1f%% %9.1f%%\n", row.label, 100*row.s, 100*row.h)
		} else {
			fmt.Fprintf(out, "%-14s %10.2f %10.2f\n", row.label, row.s, row.h)
		}
	}
	fmt.Fprintf(out, "%-14s %10d %10d\n", "trades", strat.Trades, hold.Trades)
	return nil
}

// load returns the bars of the CSV file, or of the demo asset symbol.
func load(csvPath, symbol string) (string, []marketdata.Price, error) {
	if csvPath != "" {
		f, err := os.Open(csvPath)
		if err != nil {
			return "", nil, err
		}
		defer f.Close()
		ps, err := marketdata.ReadPricesCSV(f)
		if err != nil {
			return "", nil, err
		}
		if len(ps) < 2 {
			return "", nil, fmt.Errorf("%s: need at least 2 bars, got %d", csvPath, len(ps))
		}
		return csvPath, ps, nil
	}
	set, err := demo.Generate(demo.Config{})
	if err != nil {
		return "", nil, err
	}
	var asset marketdata.Asset
	for _, a := range set.Assets {
		if (symbol == "" && a.Type == marketdata.Stock) || marketdata.NormalizeSymbol(symbol) == a.Symbol {
			asset = a
			break
		}
	}
	if asset.Symbol == "" {
		return "", nil, fmt.Errorf("no demo asset %q", symbol)
	}
	var ps []marketdata.Price
	for _, p := range set.Prices {
		if p.AssetID == asset.ID {
			ps = append(ps, p)
		}
	}
	return asset.Symbol + " (demo data: SYNTHETIC prices)", ps, nil
}

// startSignal is an entry signal on the first bar only: buy and hold.
func startSignal(n int) []float64 {
	s := make([]float64, n)
	s[0] = 1
	return s
}
