// Command sweep runs one strategy over a grid of parameters on all cores
// and prints a table of the results, best Sharpe ratio first: a moving
// average crossover whose fast and slow lengths vary, over the
// point-in-time members of a demo index.
//
//	go run ./examples/sweep
//	go run ./examples/sweep -index TKXGL25 -fast 5,10,20,50 -slow 100,200 -max-positions 10
//
// Each combination is a backtest.Run; the runs share the universe and go
// on GOMAXPROCS goroutines. The demo prices are SYNTHETIC, and the best
// row of a grid is the one most likely to be luck: compare it with its
// neighbours.
package main
