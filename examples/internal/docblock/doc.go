// Package docblock reads and rewrites the output that the documentation
// shows for a command, so that the examples' tests compare it with what
// the code prints and can regenerate it:
//
//	want, err := docblock.After("../../docs/library.md", "go run ./examples/backtest")
//	err = docblock.Replace("../../docs/library.md", "go run ./examples/backtest", got)
//
// The output is the fenced block that follows the fenced block holding
// the command's first line in the file.
package docblock
