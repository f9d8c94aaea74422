package knowledge_test

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/knowledge"
)

// with returns smallPack with files added or replaced (nil removes one).
func with(files map[string]*fstest.MapFile) fstest.MapFS {
	fsys := smallPack()
	for name, f := range files {
		if f == nil {
			delete(fsys, name)
			continue
		}
		fsys[name] = f
	}
	return fsys
}

// post returns the lines of a valid post file with extra front matter
// lines inserted before the closing delimiter.
func post(slug string, extra ...string) *fstest.MapFile {
	lines := []string{"---", "title: T", "slug: " + slug, "category: news", "publishedAt: 2026-01-02"}
	lines = append(lines, extra...)
	return file(append(lines, "---", "Body.")...)
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]*fstest.MapFile
		file  string
		line  int
		msg   string
	}{
		{"no front matter", map[string]*fstest.MapFile{"blog/posts/x.md": file("title: T", "Body.")},
			"blog/posts/x.md", 1, `must start with a "---"`},
		{"unclosed", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "Body.")},
			"blog/posts/x.md", 1, "not closed"},
		{"unknown key", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "author: me")},
			"blog/posts/x.md", 6, `unknown key "author"`},
		{"key case matters", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "Featured: true")},
			"blog/posts/x.md", 6, `unknown key "Featured"`},
		{"missing required", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "slug: x", "category: news", "---", "Body.")},
			"blog/posts/x.md", 1, `missing required key "publishedAt"`},
		{"bad date", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "slug: x", "category: news", "publishedAt: 2026-02-30", "---", "Body.")},
			"blog/posts/x.md", 5, "publishedAt must be a date"},
		{"bad time", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "slug: x", "category: news", "publishedAt: 2026-02-03 09:00", "---", "Body.")},
			"blog/posts/x.md", 5, "publishedAt must be a date"},
		{"bad boolean", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "featured: yes")},
			"blog/posts/x.md", 6, "featured must be true or false"},
		{"line without colon", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "just words")},
			"blog/posts/x.md", 6, `expected "key: value"`},
		{"malformed key", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "published at: 2026-01-02")},
			"blog/posts/x.md", 6, `malformed key "published at"`},
		{"repeated key", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "title: Again")},
			"blog/posts/x.md", 6, `key "title" repeated (first on line 2)`},
		{"empty value", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "tags:")},
			"blog/posts/x.md", 6, `key "tags" has an empty value`},
		{"bad slug", map[string]*fstest.MapFile{"blog/posts/x.md": post("Bad_Slug")},
			"blog/posts/x.md", 3, `slug "Bad_Slug" is not a slug`},
		{"list without brackets", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "tags: a, b")},
			"blog/posts/x.md", 6, "tags must be a list"},
		{"list item repeated", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "tags: [a, b, a]")},
			"blog/posts/x.md", 6, `tags item "a" repeated`},
		{"list item empty", map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "tags: [a, , b]")},
			"blog/posts/x.md", 6, `tags item "" is not a slug`},
		{"empty body", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "slug: x", "category: news", "publishedAt: 2026-01-02", "---", "", "  ")},
			"blog/posts/x.md", 7, "empty body"},
		{"unknown blog category", map[string]*fstest.MapFile{"blog/posts/x.md": file("---", "title: T", "slug: x", "category: sports", "publishedAt: 2026-01-02", "---", "Body.")},
			"blog/posts/x.md", 4, `unknown blog category "sports"`},
		{"duplicate post slug", map[string]*fstest.MapFile{"blog/posts/x.md": post("hello")},
			"blog/posts/x.md", 3, `duplicate post slug "hello" (also in blog/posts/hello.md)`},
		{"duplicate category slug", map[string]*fstest.MapFile{"blog/categories/zz.md": file("---", "name: More news", "slug: news", "---")},
			"blog/categories/zz.md", 3, `duplicate blog category slug "news" (also in blog/categories/news.md)`},
		{"dangling related term", map[string]*fstest.MapFile{"glossary/terms/mean.md": file("---", "term: Mean", "slug: mean", "category: stats", "related: [median, variance]", "---", "Avg.")},
			"glossary/terms/mean.md", 5, `related term "variance" does not exist`},
		{"term related to itself", map[string]*fstest.MapFile{"glossary/terms/mode.md": file("---", "term: Mode", "slug: mode", "category: other", "related: [mean, mode]", "---", "X.")},
			"glossary/terms/mode.md", 5, `term "mode" lists itself`},
		{"unknown glossary category", map[string]*fstest.MapFile{"glossary/terms/mode.md": file("---", "term: Mode", "slug: mode", "category: misc", "---", "X.")},
			"glossary/terms/mode.md", 4, `unknown glossary category "misc"`},
		{"term without definition", map[string]*fstest.MapFile{"glossary/terms/mode.md": file("---", "term: Mode", "slug: mode", "category: other", "---")},
			"glossary/terms/mode.md", 6, "empty body"},
		{"bad status", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: done", "category: platform", "estimatedRelease: 2027-Q2", "votes: 3", "---", "X.")},
			"roadmap/beta.md", 4, `status must be planned, in_progress or released, got "done"`},
		{"released without releasedAt", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: released", "category: platform", "votes: 3", "---", "X.")},
			"roadmap/beta.md", 1, `missing required key "releasedAt"`},
		{"released with estimate", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: released", "category: platform", "releasedAt: 2026-01-01", "estimatedRelease: 2027-Q2", "votes: 3", "---", "X.")},
			"roadmap/beta.md", 7, "a released item has releasedAt, not estimatedRelease"},
		{"planned with releasedAt", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "releasedAt: 2026-01-01", "votes: 3", "---", "X.")},
			"roadmap/beta.md", 7, "only a released item has releasedAt"},
		{"bad quarter", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q5", "votes: 3", "---", "X.")},
			"roadmap/beta.md", 6, `estimatedRelease must be YYYY-Qn`},
		{"negative votes", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: -1", "---", "X.")},
			"roadmap/beta.md", 7, "votes must be a non-negative integer"},
		{"bad roadmap category", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: Market-Data", "estimatedRelease: 2027-Q2", "votes: 1", "---", "X.")},
			"roadmap/beta.md", 5, `category "Market-Data" must be lowercase words joined by underscores`},
		{"route without a method", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "routes: [/api/v1/roadmap]", "---", "X.")},
			"roadmap/beta.md", 8, `routes item "/api/v1/roadmap" is not a route "METHOD /path"`},
		{"route with a lowercase method", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "routes: [get /api/v1/roadmap]", "---", "X.")},
			"roadmap/beta.md", 8, `routes item "get /api/v1/roadmap" is not a route`},
		{"route path not absolute", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "routes: [GET api/v1/roadmap]", "---", "X.")},
			"roadmap/beta.md", 8, `routes item "GET api/v1/roadmap" is not a route`},
		{"route repeated", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "routes: [GET /a, GET /a]", "---", "X.")},
			"roadmap/beta.md", 8, `routes item "GET /a" repeated`},
		{"package outside the module", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "packages: [../server]", "---", "X.")},
			"roadmap/beta.md", 8, `packages item "../server" is not a package path from the module root`},
		{"package as an import path", map[string]*fstest.MapFile{"roadmap/beta.md": file("---", "title: Beta", "slug: beta", "status: planned", "category: platform", "estimatedRelease: 2027-Q2", "votes: 1", "packages: [github.com/tradekit/tradekit/indicators]", "---", "X.")},
			"roadmap/beta.md", 8, `is not a package path from the module root`},
		{"non-markdown file", map[string]*fstest.MapFile{"glossary/terms/notes.txt": file("x")},
			"glossary/terms/notes.txt", 0, "only .md files belong here"},
		{"unknown directory", map[string]*fstest.MapFile{"glosary/terms/a.md": file("x")},
			"glosary", 0, "unknown directory"},
		{"file in section directory", map[string]*fstest.MapFile{"blog/readme.md": file("x")},
			"blog/readme.md", 0, "unexpected file"},
		{"windows line endings and BOM", map[string]*fstest.MapFile{"blog/posts/x.md": {Data: []byte("\ufeff---\r\ntitle: T\r\nslug: x\r\ncategory: news\r\npublishedAt: 2026-01-02\r\nextra: 1\r\n---\r\nBody.\r\n")}},
			"blog/posts/x.md", 6, `unknown key "extra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := knowledge.Parse(with(tt.files))
			if err == nil {
				t.Fatal("Parse() = nil error, want an error")
			}
			if !errors.Is(err, tradekit.ErrInvalid) {
				t.Errorf("Parse() error %v does not wrap tradekit.ErrInvalid", err)
			}
			var pe *knowledge.ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse() error %v is not a *ParseError", err)
			}
			if pe.File != tt.file || pe.Line != tt.line || !strings.Contains(pe.Msg, tt.msg) {
				t.Errorf("Parse() error = %s:%d: %s\nwant %s:%d: …%s…", pe.File, pe.Line, pe.Msg, tt.file, tt.line, tt.msg)
			}
		})
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := knowledge.Parse(with(map[string]*fstest.MapFile{"blog/posts/x.md": post("x", "author: me")}))
	want := `knowledge: blog/posts/x.md:6: unknown key "author"`
	if err == nil || err.Error() != want {
		t.Errorf("Parse() error = %v, want %s", err, want)
	}
}

func TestParseReportsEveryBrokenFile(t *testing.T) {
	_, err := knowledge.Parse(with(map[string]*fstest.MapFile{
		"blog/posts/a.md":     post("a", "author: me"),
		"blog/posts/b.md":     post("b", "featured: maybe"),
		"roadmap/beta.md":     nil,
		"glossary/terms/x.md": file("---", "term: X", "slug: x", "category: stats", "related: [nope]", "---", "X."),
	}))
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var pe *knowledge.ParseError
		if errors.As(e, &pe) {
			got = append(got, pe.File)
		}
	}
	want := "blog/posts/a.md blog/posts/b.md glossary/terms/x.md"
	if strings.Join(got, " ") != want {
		t.Errorf("errors name files %v, want %s", got, want)
	}
}

func TestParseOptionalSections(t *testing.T) {
	p, err := knowledge.Parse(fstest.MapFS{
		"glossary/categories/a.md": file("---", "name: A", "slug: a", "---"),
		"glossary/terms/t.md":      file("---", "term: T", "slug: t", "category: a", "---", "Def."),
	})
	if err != nil {
		t.Fatalf("Parse() of a glossary-only pack: %v", err)
	}
	if len(p.Posts(knowledge.PostFilter{})) != 0 || len(p.Roadmap()) != 0 || len(p.BlogCategories()) != 0 || len(p.Terms()) != 1 {
		t.Error("glossary-only pack: unexpected content")
	}
	if term, _ := p.Term("t"); term.RelatedTerms == nil {
		t.Error("RelatedTerms = nil, want an empty slice")
	}
}

// FuzzParse feeds arbitrary bytes as a post file: Parse must not panic, and
// any error must be invalid content naming a file.
func FuzzParse(f *testing.F) {
	f.Add([]byte("---\ntitle: T\nslug: x\ncategory: news\npublishedAt: 2026-01-02\n---\nBody.\n"))
	f.Add([]byte("---\ntags: [a, , b]\n---\n"))
	f.Add([]byte("---\n---\n"))
	f.Add([]byte("\ufeff---\r\n: x\r\n---"))
	f.Fuzz(func(t *testing.T, src []byte) {
		_, err := knowledge.Parse(with(map[string]*fstest.MapFile{"blog/posts/x.md": {Data: src}}))
		if err == nil {
			return
		}
		var pe *knowledge.ParseError
		if !errors.Is(err, tradekit.ErrInvalid) || !errors.As(err, &pe) || pe.File == "" || pe.Line < 0 {
			t.Fatalf("Parse() error %v: want a *ParseError naming a file", err)
		}
	})
}
