// Package indicators computes technical indicators over float64 price
// series, with the values of TA-Lib's C library, in batch and streaming
// form.
//
//	close := []float64{ /* oldest first */ }
//	sma := indicators.SMA(close, 20)           // NaN for the first 19 values
//	macd, signal, hist := indicators.MACD(close, 12, 26, 9)
//
//	s := indicators.NewRSIStream(14)           // one bar at a time
//	v := s.Next(price)                         // commit a closed bar
//	w := s.Peek(lastTrade)                     // value for a forming bar, state unchanged
//
// The package documentation is completed in later commits.
package indicators
