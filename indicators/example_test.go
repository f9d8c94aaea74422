package indicators_test

import (
	"fmt"

	"github.com/tradekit/tradekit/indicators"
)

// closes is a short daily close series, oldest first. The outputs shown
// in these examples are the values TA-Lib's C library gives for the same
// inputs.
var closes = []float64{44.34, 44.09, 44.15, 43.61, 44.33, 44.83, 45.10, 45.42, 45.84, 46.08, 45.89, 46.03, 45.61, 46.28, 46.28, 46.00, 46.03, 46.41, 46.22, 45.64}

func ExampleSMA() {
	sma := indicators.SMA([]float64{1, 2, 3, 4, 5}, 3)
	fmt.Println(sma) // NaN until 3 values are in
	// Output: [NaN NaN 2 3 4]
}

func ExampleEMA() {
	// Seeded with the mean of the first 3 values (2), then k = 2/(3+1) = 0.5.
	ema := indicators.EMA([]float64{1, 2, 3, 5, 9, 9}, 3)
	fmt.Println(ema)
	// Output: [NaN NaN 2 3.5 6.25 7.625]
}

func ExampleRSI() {
	rsi := indicators.RSI(closes, 14)
	for i := 14; i < len(rsi); i++ {
		fmt.Printf("%d %.4f\n", i, rsi[i])
	}
	// Output:
	// 14 70.4641
	// 15 66.2496
	// 16 66.4809
	// 17 69.3469
	// 18 66.2947
	// 19 57.9150
}

func ExampleATR() {
	high := []float64{10, 11, 12, 11.5, 12.5}
	low := []float64{9, 9.5, 10.5, 10, 11}
	close := []float64{9.5, 10.5, 11.5, 10.5, 12}
	atr := indicators.ATR(high, low, close, 3)
	// TR = 1.5, 1.5, 1.5, 2 from bar 1; ATR[3] = mean(1.5, 1.5, 1.5), then (1.5*2 + 2)/3.
	fmt.Printf("%.4f\n", atr)
	// Output: [NaN NaN NaN 1.5000 1.6667]
}

func ExampleMACD() {
	macd, signal, hist := indicators.MACD(closes, 3, 6, 4)
	for i := range closes {
		if i >= 8 && i < 12 { // lookback 6-1 + 4-1 = 8
			fmt.Printf("%d %.4f %.4f %.4f\n", i, macd[i], signal[i], hist[i])
		}
	}
	// Output:
	// 8 0.3867 0.2315 0.1553
	// 9 0.4124 0.3038 0.1086
	// 10 0.3219 0.3111 0.0109
	// 11 0.2736 0.2961 -0.0225
}

func ExampleBollingerBands() {
	upper, middle, lower := indicators.BollingerBands([]float64{2, 4, 4, 4, 5, 5, 7, 9}, 8, 2)
	// Population standard deviation of the 8 values is 2.
	fmt.Println(upper[7], middle[7], lower[7])
	// Output: 9 5 1
}

// A stream takes one bar at a time and gives the batch function's values;
// Peek shows the value for a bar that is still forming without committing it.
func ExampleSMAStream() {
	s := indicators.NewSMAStream(3)
	for _, x := range []float64{1, 2, 3} {
		fmt.Println(s.Next(x))
	}
	fmt.Println(s.Peek(10)) // the live bar trades at 10: (2+3+10)/3
	fmt.Println(s.Peek(7))  // now at 7, and still nothing committed
	fmt.Println(s.Next(4))  // the bar closes at 4
	// Output:
	// NaN
	// NaN
	// 2
	// 5
	// 4
	// 3
}
