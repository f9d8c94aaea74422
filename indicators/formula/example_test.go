package formula_test

import (
	"errors"
	"fmt"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/indicators/formula"
	"github.com/tradekit/tradekit/ohlcv"
)

func ExampleParse() {
	e, err := formula.Parse("crossover(close, sma(close, 3))")
	if err != nil {
		fmt.Println(err)
		return
	}
	out, err := e.Eval(ohlcv.Series{Close: []float64{1, 2, 3, 4, 5, 4, 3, 2, 3, 4}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(out)
	fmt.Println(e)
	// Output:
	// [NaN NaN NaN 0 0 0 0 0 1 0]
	// crossover(close,sma(close,3))
}

func ExampleParse_error() {
	_, err := formula.Parse("hl2 + 10 - sma(close)")
	fmt.Println(err)

	var se *formula.SyntaxError
	if errors.As(err, &se) {
		fmt.Println(se.Line, se.Col, se.Pos, errors.Is(err, tradekit.ErrInvalid))
	}
	// Output:
	// 1:12: sma expects 2 arguments, got 1
	// 1 12 11 true
}

func ExampleExpr_Eval() {
	e, _ := formula.Parse("close > open ? (close - open) / open * 100 : 0")
	out, _ := e.Eval(ohlcv.Series{
		Open:  []float64{100, 102, 101},
		Close: []float64{102, 101, 103.02},
	})
	for _, v := range out {
		fmt.Printf("%.2f\n", v)
	}
	// Output:
	// 2.00
	// 0.00
	// 2.00
}

func ExampleExpr_Cost() {
	for _, src := range []string{"close > sma(close, 50)", "cci(20) > 100"} {
		e, err := formula.Parse(src)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(src, "costs", e.Cost(), e.CheckCost(10))
	}
	// Output:
	// close > sma(close, 50) costs 5 <nil>
	// cci(20) > 100 costs 24 costs 24, the plan allows 10
}
