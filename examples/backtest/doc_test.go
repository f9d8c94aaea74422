package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tradekit/tradekit/examples/internal/docblock"
)

// documentedCommands returns the argument lists of every
// "go run ./examples/backtest …" command in src: lines continued with a
// trailing backslash are joined, a leading "//" (doc comments) and a
// trailing "# comment" are dropped, and the words are split as a POSIX
// shell would for plain words and single- or double-quoted strings.
func documentedCommands(tb testing.TB, src string) [][]string {
	tb.Helper()
	const cmd = "go run ./examples/backtest"
	var out [][]string
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "//"))
		at := strings.Index(line, cmd)
		if at < 0 {
			continue
		}
		full := line[at+len(cmd):]
		for strings.HasSuffix(full, `\`) && i+1 < len(lines) {
			i++
			full = strings.TrimSuffix(full, `\`) + " " + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "//"))
		}
		out = append(out, shellWords(tb, full))
	}
	return out
}

// shellWords splits s into words: blanks separate them, '…' and "…" quote
// (no escapes inside), and an unquoted # starts a comment.
func shellWords(tb testing.TB, s string) []string {
	tb.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\'' || c == '"':
			end := strings.IndexByte(s[i+1:], c)
			if end < 0 {
				tb.Fatalf("unterminated quote in %q", s)
			}
			w.WriteString(s[i+1 : i+1+end])
			i += 1 + end
			inWord = true
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			i = len(s)
		default:
			w.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

func TestShellWords(t *testing.T) {
	t.Parallel()
	got := shellWords(t, ` -symbol QNTC -entry 'crossover(ema(close, 20), ema(close, 50))' -x "a b"c   # demo`)
	want := []string{"-symbol", "QNTC", "-entry", "crossover(ema(close, 20), ema(close, 50))", "-x", "a bc"}
	if !slices.Equal(got, want) {
		t.Errorf("shellWords = %q, want %q", got, want)
	}
}

// TestDocumentedCommands runs every command that the package comment and
// the repository's README and docs/library.md show, so that they name only demo symbols and
// formulas that exist. Commands reading a -csv file are skipped: the file
// is the reader's.
func TestDocumentedCommands(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates the demo data set and runs every documented command")
	}
	for _, file := range []string{"doc.go", "../../README.md", "../../docs/library.md"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		cmds := documentedCommands(t, string(src))
		if len(cmds) == 0 {
			t.Errorf("%s shows no go run ./examples/backtest command", file)
		}
		for _, args := range cmds {
			if slices.Contains(args, "-csv") {
				continue
			}
			t.Run(strings.Join(append([]string{file}, args...), " "), func(t *testing.T) {
				var out bytes.Buffer
				args := append(slices.Clone(args), "-png", filepath.Join(t.TempDir(), "chart.png"))
				if err := run(args, &out); err != nil {
					t.Fatalf("run(%q): %v", args, err)
				}
				if !strings.Contains(out.String(), "buy & hold") || !strings.Contains(out.String(), "chart.png") {
					t.Errorf("output lacks the comparison table:\n%s", out.String())
				}
			})
		}
	}
}

// update rewrites the documented output with what the code prints.
var update = flag.Bool("update", false, "rewrite the example's output in docs/library.md")

// TestDocumentedOutput runs the example as docs/library.md shows it, with
// no arguments, and compares what it prints with the output the page
// shows, figure for figure, so that the page never shows numbers that the
// deterministic demo data does not give (go test ./examples/backtest -run
// DocumentedOutput -update rewrites them).
func TestDocumentedOutput(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("generates the demo data set")
	}
	const doc, cmd = "../../docs/library.md", "go run ./examples/backtest"
	png := filepath.Join(t.TempDir(), "backtest.png")
	var out bytes.Buffer
	if err := run([]string{"-png", png}, &out); err != nil {
		t.Fatal(err)
	}
	got := strings.ReplaceAll(out.String(), png, "backtest.png") // the default -png
	if *update {
		if err := docblock.Replace(doc, cmd, got); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := docblock.After(doc, cmd)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("%s shows an output the example does not print:\n%s", doc, docblock.Diff(want, got))
	}
}
