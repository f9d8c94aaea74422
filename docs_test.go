package tradekit_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"
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

// runnableMarker is the line that marks the next ```sh block of README.md
// as runnable: TestReadmeRunnable runs it as written.
const runnableMarker = "<!-- runnable -->"

// readmeAddr is the address README's runnable blocks serve on and call;
// TestReadmeRunnable puts a free port of its own in its place.
const readmeAddr = "127.0.0.1:8080"

// runnableBlocks returns the ```sh blocks of src marked runnable, in
// order, and an error when a marker is not followed by a ```sh block.
func runnableBlocks(src string) ([]string, error) {
	var blocks []string
	lines := strings.Split(src, "\n")
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != runnableMarker {
			continue
		}
		if i+1 >= len(lines) || strings.TrimSpace(lines[i+1]) != "```sh" {
			return nil, fmt.Errorf("line %d: %s is not followed by a ```sh block", i+1, runnableMarker)
		}
		var block []string
		for i += 2; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			block = append(block, lines[i])
		}
		if i == len(lines) {
			return nil, fmt.Errorf("the runnable block before line %d has no end", i+1)
		}
		blocks = append(blocks, strings.Join(block, "\n"))
	}
	return blocks, nil
}

// TestRunnableBlocks checks how runnableBlocks reads a page.
func TestRunnableBlocks(t *testing.T) {
	t.Parallel()
	got, err := runnableBlocks("x\n```sh\nnot this\n```\n" + runnableMarker + "\n```sh\na\nb\n```\n```sh\nnor this\n```\n")
	if err != nil || len(got) != 1 || got[0] != "a\nb" {
		t.Errorf("runnableBlocks = %q, %v; want [\"a\\nb\"]", got, err)
	}
	for _, bad := range []string{runnableMarker + "\ntext\n", runnableMarker + "\n```sh\nno end\n"} {
		if _, err := runnableBlocks(bad); err == nil {
			t.Errorf("runnableBlocks(%q) took a bad marker for a block", bad)
		}
	}
}

// TestReadmeRunnable runs the ```sh blocks of README.md marked runnable
// (the line before the block is runnableMarker), in order, in one bash
// with -e -u -o pipefail, as a reader pasting them into one terminal
// would: in a temporary directory holding bin/tradekit freshly built
// from this tree, on a new SQLite database (TRADEKIT_DB), with the
// server's address readmeAddr replaced by a free port. It fails when any
// command of a block fails, or when the blocks take more than two
// minutes. The blocks call the server with curl: without curl on PATH
// the test is skipped, saying so.
func TestReadmeRunnable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the tradekit binary and runs a server: not in -short")
	}
	src, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks, err := runnableBlocks(string(src))
	if err != nil {
		t.Fatalf("README.md: %v", err)
	}
	if len(blocks) == 0 {
		t.Fatalf("README.md has no block marked %s: First calls should be one", runnableMarker)
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("README's runnable blocks need %s, which is not on PATH: not run", tool)
		}
	}
	dir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "tradekit"), "./cmd/tradekit")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/tradekit: %v\n%s", err, out)
	}
	addr := freeAddr(t)
	script := strings.ReplaceAll(strings.Join(blocks, "\n"), readmeAddr, addr)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "--noprofile", "--norc", "-e", "-u", "-o", "pipefail", "-x", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(withoutTradekitEnv(os.Environ()), "HOME="+dir, "TRADEKIT_DB="+filepath.Join(dir, "tradekit.db"),
		`PS4=+ README: `)
	// The output goes to a file, not a pipe: a server left running in the
	// background would hold a pipe open, and Run would wait for it.
	out, err := os.Create(filepath.Join(dir, "output"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	// The blocks and whatever they start in the background (the server)
	// form a process group, killed when they end or time out.
	ownProcessGroup(cmd)
	cmd.Cancel = func() error { killProcessGroup(cmd); return nil }
	start := time.Now()
	err = cmd.Run()
	killProcessGroup(cmd)
	if err != nil {
		trace, _ := os.ReadFile(out.Name())
		t.Fatalf("README's runnable blocks failed (%v, after %s), on %s; the trace (+ lines are commands):\n%s",
			err, time.Since(start).Round(time.Millisecond), addr, trace)
	}
	t.Logf("README's runnable blocks ran in %s", time.Since(start).Round(time.Millisecond))
}

// freeAddr returns a loopback address with a port nobody listens on.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// withoutTradekitEnv returns env without the variables that configure
// Tradekit (TRADEKIT_*, OTEL_*), so that the reader's settings leave
// the runnable blocks alone.
func withoutTradekitEnv(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		return strings.HasPrefix(kv, "TRADEKIT_") || strings.HasPrefix(kv, "OTEL_")
	})
}

// mdLink matches the target of a Markdown link: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// headingAnchors returns the anchors GitHub gives the headings of a
// Markdown page: lowercase, spaces as hyphens, punctuation dropped.
func headingAnchors(src string) map[string]bool {
	anchors := map[string]bool{}
	in := false
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "```") {
			in = !in
		}
		if in || !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range title {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		anchors[b.String()] = true
	}
	return anchors
}

// TestDocsLinks checks that every relative link of README.md and
// docs/*.md leads to a file of the repository and, when it names an
// anchor in a Markdown page, to a heading of that page.
func TestDocsLinks(t *testing.T) {
	t.Parallel()
	for _, file := range docFiles(t) {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(b), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			page := file
			if path != "" {
				page = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(page); err != nil {
					t.Errorf("%s links to %s, which does not exist", file, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(page, ".md") {
				continue
			}
			src, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			if !headingAnchors(string(src))[anchor] {
				t.Errorf("%s links to %s, but %s has no heading #%s", file, target, page, anchor)
			}
		}
	}
}
