package docblock

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// After returns the text of the fenced block that follows the fenced
// block holding the first line of file that contains cmd, with a final
// newline. The error names the file and says what it lacks.
func After(file, cmd string) (string, error) {
	start, end, lines, err := find(file, cmd)
	if err != nil {
		return "", err
	}
	return strings.Join(lines[start:end], "\n") + "\n", nil
}

// Replace replaces the text of the block that [After] finds with text.
func Replace(file, cmd, text string) error {
	start, end, lines, err := find(file, cmd)
	if err != nil {
		return err
	}
	lines = slices.Concat(lines[:start], strings.Split(strings.TrimSuffix(text, "\n"), "\n"), lines[end:])
	return os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o644)
}

// find returns the lines of file and the bounds [start, end) of the block
// After describes.
func find(file, cmd string) (start, end int, lines []string, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, 0, nil, err
	}
	lines = strings.Split(string(b), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.Contains(l, cmd) })
	if at < 0 {
		return 0, 0, nil, fmt.Errorf("docblock: %s has no line running %s", file, cmd)
	}
	fence := 0 // fences after the command: its block's closing one, then the output's opening and closing ones
	for i := at + 1; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		switch fence++; fence {
		case 2:
			start = i + 1
		case 3:
			return start, i, lines, nil
		}
	}
	return 0, 0, nil, fmt.Errorf("docblock: %s shows no output block after %s", file, cmd)
}

// Diff lists the lines of want and got that differ, numbered from 1.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  doc:  %q\n  code: %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
