package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tradekit/tradekit/backtest"
	"github.com/tradekit/tradekit/examples/internal/universe"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "sweep:", err)
		os.Exit(1)
	}
}

// row is one combination's outcome.
type row struct {
	fast, slow int
	stats      backtest.Stats
}

func run(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	index := fs.String("index", "TKXUS15", "demo index whose point-in-time members to trade")
	fastList := fs.String("fast", "10,20,50", "fast moving-average lengths, comma-separated")
	slowList := fs.String("slow", "100,150,200", "slow moving-average lengths, comma-separated")
	maxPositions := fs.Int("max-positions", 5, "most positions held at once")
	if err := fs.Parse(args); err != nil {
		return err
	}
	fast, err := ints("-fast", *fastList)
	if err != nil {
		return err
	}
	slow, err := ints("-slow", *slowList)
	if err != nil {
		return err
	}
	u, err := universe.Demo(*index, "")
	if err != nil {
		return err
	}
	var rows []*row
	for _, f := range fast {
		for _, s := range slow {
			if f < s {
				rows = append(rows, &row{fast: f, slow: s})
			}
		}
	}
	if len(rows) == 0 {
		return errors.New("no combination with a fast length below a slow one")
	}
	start := time.Now()
	g, ctx := errgroup.WithContext(context.Background())
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, r := range rows {
		g.Go(func() error {
			ma := fmt.Sprintf("sma(close, %d), sma(close, %d)", r.fast, r.slow)
			s, err := backtest.Strategy{Entry: "crossover(" + ma + ")", Exit: "crossunder(" + ma + ")",
				MaxPositions: *maxPositions, CommissionBps: 5, SlippageBps: 5}.Compile()
			if err != nil {
				return err
			}
			res, err := backtest.Run(ctx, s, u.Assets, backtest.Config{Days: u.Days, Workers: 1})
			if err != nil {
				return err
			}
			r.stats = res.Stats
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b *row) int { return cmp.Compare(b.stats.Sharpe, a.stats.Sharpe) })

	fmt.Fprintf(out, "%s; demo data: SYNTHETIC prices\n%d runs on %d cores in %s\n\n", u.Name, len(rows), runtime.GOMAXPROCS(0),
		time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(out, "%5s %5s %8s %8s %7s %9s %7s %9s\n", "fast", "slow", "CAGR", "Sharpe", "Calmar", "max DD", "trades", "win rate")
	for _, r := range rows {
		s := r.stats
		fmt.Fprintf(out, "%5d %5d %7.1f%% %8.2f %7.2f %8.1f%% %7d %8.1f%%\n", r.fast, r.slow, 100*s.CAGR, s.Sharpe, s.Calmar,
			100*s.MaxDrawdown, s.Trades, 100*s.WinRate)
	}
	return nil
}

// ints parses a comma-separated list of positive whole numbers.
func ints(flag, list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: %q is not a positive whole number", flag, f)
		}
		out = append(out, n)
	}
	return out, nil
}
