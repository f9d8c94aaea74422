package brokers

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file under brokers/ may
// hold: a file past it mixes concerns, and is split by them.
const maxFileLines = 600

// TestFileSize checks that no non-test Go file in this directory or below
// it is over maxFileLines lines.
func TestFileSize(t *testing.T) {
	n := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		if lines := bytes.Count(b, []byte("\n")); lines > maxFileLines {
			t.Errorf("%s has %d lines, over %d: split it by concern", path, lines, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("found %d Go files under brokers/, want the package's and its subpackages'", n)
	}
}
