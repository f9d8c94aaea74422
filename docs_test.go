package tradekit_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docFiles returns README.md and docs/*.md, the pages a clone shows.
func docFiles(tb testing.TB) []string {
	tb.Helper()
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		tb.Fatal(err)
	}
	return append([]string{"README.md"}, files...)
}

// outside is what a path to the project's shared papers starts with:
// a directory beside the repository's root, which a clone lacks. It is
// spelt in two pieces so that this file does not match itself.
const outside = ".." + "/shared"

// repoFiles returns the files of the repository whose names end with
// ext, skipping hidden directories and testdata.
func repoFiles(tb testing.TB, ext string) []string {
	tb.Helper()
	var files []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ext) {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}

// TestDocsNoSharedLinks checks that no page (README.md, docs/*.md) and no
// Go file (comments included) links or points to the shared papers beside
// the repository's root: a clone lacks them, so what they say belongs in
// docs/.
func TestDocsNoSharedLinks(t *testing.T) {
	t.Parallel()
	for _, file := range append(docFiles(t), repoFiles(t, ".go")...) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, outside) {
				t.Errorf("%s:%d points outside the repository: %s", file, i+1, strings.TrimSpace(line))
			}
		}
	}
}

// docsPath matches a path to a page of docs/ as Go comments name it.
var docsPath = regexp.MustCompile(`\bdocs/[A-Za-z0-9_-]+\.md\b`)

// TestGoCommentsNameExistingDocs checks that every page of docs/ that a
// Go file names exists, so that a comment sending its reader to the
// documentation does not send them nowhere.
func TestGoCommentsNameExistingDocs(t *testing.T) {
	t.Parallel()
	for _, file := range repoFiles(t, ".go") {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, page := range docsPath.FindAllString(line, -1) {
				if _, err := os.Stat(page); err != nil {
					t.Errorf("%s:%d names %s, which does not exist", file, i+1, page)
				}
			}
		}
	}
}

var (
	// shellUse matches a use of a shell variable: $NAME or ${NAME…}.
	shellUse = regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	// shellAssign matches an assignment NAME=… at the start of a command.
	shellAssign = regexp.MustCompile(`(?:^|[\s;&|(])(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=`)
	// shellFor matches the variable of a for loop.
	shellFor = regexp.MustCompile(`\bfor\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b`)
)

// environment lists variables a shell or the reader's environment
// provides, which no page needs to assign.
var environment = []string{"HOME", "PATH", "PWD", "USER", "TMPDIR"}

// shellBlocks returns the lines of the ```sh blocks of src.
func shellBlocks(src string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(src, "\n") {
		switch {
		case !in && (strings.HasPrefix(line, "```sh") || strings.HasPrefix(line, "```bash")):
			in = true
		case in && strings.HasPrefix(line, "```"):
			in = false
		case in:
			out = append(out, line)
		}
	}
	return out
}

// assigned returns the variables that lines assign.
func assigned(lines []string) map[string]bool {
	set := map[string]bool{}
	for _, line := range lines {
		code, _, _ := strings.Cut(line, " #")
		for _, re := range []*regexp.Regexp{shellAssign, shellFor} {
			for _, m := range re.FindAllStringSubmatch(code, -1) {
				set[m[1]] = true
			}
		}
	}
	return set
}

// TestDocsShellVariables checks that every shell variable the ```sh
// blocks of README.md and docs/*.md use is assigned in a block of the
// same page or in README's (First calls sets KEY and H, which the other
// pages say they carry over), so each example runs as written. It is a
// heuristic: an assignment anywhere in the page counts, before or after.
func TestDocsShellVariables(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fromReadme := assigned(shellBlocks(string(readme)))
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		lines := shellBlocks(string(b))
		known := assigned(lines)
		for _, line := range lines {
			code, _, _ := strings.Cut(line, " #")
			for _, m := range shellUse.FindAllStringSubmatch(code, -1) {
				if v := m[1]; !known[v] && !fromReadme[v] && !slices.Contains(environment, v) {
					t.Errorf("%s uses $%s, which no example assigns: %s", file, v, strings.TrimSpace(line))
				}
			}
		}
	}
}

// TestShellHeuristics checks the patterns the docs tests rely on.
func TestShellHeuristics(t *testing.T) {
	t.Parallel()
	got := assigned([]string{`KEY=$(bin/tradekit keys create | tail -1)`, `for SYM in A B; do X=1; done`,
		`export TRADEKIT_DB=x.db`, `curl "$URL?a=b"   # not=an assignment`})
	for _, v := range []string{"KEY", "SYM", "X", "TRADEKIT_DB"} {
		if !got[v] {
			t.Errorf("assigned misses %s", v)
		}
	}
	if got["a"] || got["not"] {
		t.Errorf("assigned took a query or a comment for an assignment: %v", got)
	}
	if uses := shellUse.FindAllStringSubmatch(`curl "$H" ${ID}/x $1`, -1); len(uses) != 2 || uses[0][1] != "H" || uses[1][1] != "ID" {
		t.Errorf("uses %q", uses)
	}
}

// TestPackagesHaveDocGo checks that every package of the module has a
// doc.go that holds its package comment ("Package x …", or "Command x …"
// for a program), and that no other file carries one, so the role of a
// package is read in one place (docs/style.md, "Doc comments"). Generated
// files are left alone, and so is a package whose comment says it is
// deprecated: an old import path kept as a shim, documented by the
// package it points to.
func TestPackagesHaveDocGo(t *testing.T) {
	t.Parallel()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed to list the packages: %v", err)
	}
	out, err := exec.Command(goTool, "list", "-f", "{{.Dir}}\t{{.Name}}\t{{join .GoFiles \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	root, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		dir, rest, _ := strings.Cut(line, "\t")
		name, files, _ := strings.Cut(rest, "\t")
		rel, err := filepath.Rel(root, dir)
		if err != nil {
			t.Fatal(err)
		}
		if problems := docGoProblems(dir, name, strings.Fields(files)); len(problems) > 0 {
			t.Errorf("package %s (%s): %s", name, rel, strings.Join(problems, "; "))
		}
	}
}

// docGoProblems returns what is wrong with where the package in dir,
// named name and built from files, keeps its package comment; nothing
// when it is right.
func docGoProblems(dir, name string, files []string) []string {
	var problems []string
	docs := map[string]string{} // file → package comment
	for _, file := range files {
		f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, file), nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			return []string{err.Error()}
		}
		if f.Doc != nil && !ast.IsGenerated(f) {
			docs[file] = f.Doc.Text()
		}
	}
	for _, doc := range docs {
		if strings.Contains(doc, "\nDeprecated: ") {
			return nil
		}
	}
	want := "Package " + name + " "
	if name == "main" {
		want = "Command "
	}
	switch doc, ok := docs["doc.go"]; {
	case !slices.Contains(files, "doc.go"):
		problems = append(problems, "no doc.go")
	case !ok:
		problems = append(problems, "doc.go has no package comment")
	case !strings.HasPrefix(doc, want):
		problems = append(problems, fmt.Sprintf("doc.go's package comment does not start %q", want))
	}
	for file := range docs {
		if file != "doc.go" {
			problems = append(problems, file+" has a package comment: move it into doc.go")
		}
	}
	slices.Sort(problems)
	return problems
}
