package knowledge

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/tradekit/tradekit"
)

// ErrNotFound is returned (wrapped, with the slug) by [Pack.Post] and
// [Pack.Term] for a slug the pack does not hold. It wraps
// [tradekit.ErrNotFound], so the server answers 404.
var ErrNotFound = fmt.Errorf("knowledge: %w", tradekit.ErrNotFound)

// Pack is a parsed content pack. It is immutable: every method returns
// fresh copies, so a Pack is safe for concurrent use and may be shared.
type Pack struct {
	posts        []PostDetail // newest first
	postIndex    map[string]int
	blogCats     []BlogCategory
	glossaryCats []GlossaryCategory
	terms        []TermDetail // by term, case-insensitively
	termIndex    map[string]int
	roadmap      []RoadmapItem
}

//go:embed content
var embedded embed.FS

// loadEmbedded parses the embedded pack once per process.
var loadEmbedded = sync.OnceValues(func() (*Pack, error) {
	sub, err := fs.Sub(embedded, "content")
	if err != nil {
		return nil, fmt.Errorf("knowledge: embedded pack: %w", err)
	}
	return Parse(sub)
})

// Load returns the content pack embedded in this package, written by the
// Tradekit project. It is parsed on the first call; later calls return the
// same *Pack. A non-nil error (a build with broken content) has the form
// described at [Parse].
func Load() (*Pack, error) { return loadEmbedded() }

// The directories of a pack, relative to its root.
const (
	dirBlogCategories     = "blog/categories"
	dirPosts              = "blog/posts"
	dirGlossaryCategories = "glossary/categories"
	dirTerms              = "glossary/terms"
	dirRoadmap            = "roadmap"
)

// Parse reads a content pack from fsys (see the package documentation for
// the layout and the front matter format) and validates it completely.
//
// Every problem found is reported as a *[ParseError] naming the file and the
// line; when there are several, they are joined with [errors.Join] in the
// order found. The error wraps [tradekit.ErrInvalid]. I/O errors from fsys are
// returned wrapped as they are.
func Parse(fsys fs.FS) (*Pack, error) {
	if err := checkLayout(fsys); err != nil {
		return nil, err
	}
	ps := &parser{
		fsys:    fsys,
		pack:    &Pack{postIndex: map[string]int{}, termIndex: map[string]int{}},
		slugs:   map[string]map[string]string{},
		blogCat: map[string]int{}, glossCat: map[string]int{},
	}
	ps.blogCategories()
	ps.glossaryCategories()
	ps.posts()
	ps.relatedTerms(ps.terms()) // needs every term: after all are read
	ps.roadmap()
	if len(ps.errs) > 0 {
		return nil, errors.Join(ps.errs...)
	}
	ps.pack.sort()
	return ps.pack, nil
}

// parser holds the state of one [Parse] call.
type parser struct {
	fsys     fs.FS
	pack     *Pack
	errs     []error
	slugs    map[string]map[string]string // kind -> slug -> file that declared it
	blogCat  map[string]int               // blog category slug -> index in pack.blogCats
	glossCat map[string]int               // glossary category slug -> index in pack.glossaryCats
}

// docs reads the documents of dir, recording any error.
func (ps *parser) docs(dir string) []*document {
	out, err := readDir(ps.fsys, dir)
	if err != nil {
		ps.errs = append(ps.errs, err)
	}
	return out
}

// ok records err, if any, and reports whether there was none.
func (ps *parser) ok(err error) bool {
	if err != nil {
		ps.errs = append(ps.errs, err)
		return false
	}
	return true
}

// claim registers slug for kind, reporting a duplicate at the slug line.
func (ps *parser) claim(kind string, d *document, slug string) bool {
	if ps.slugs[kind] == nil {
		ps.slugs[kind] = map[string]string{}
	}
	if first, dup := ps.slugs[kind][slug]; dup {
		return ps.ok(d.errorf(d.line("slug"), "duplicate %s slug %q (also in %s)", kind, slug, first))
	}
	ps.slugs[kind][slug] = d.file
	return true
}

// sort puts every list in its documented order and builds the slug indexes.
func (p *Pack) sort() {
	slices.SortFunc(p.posts, func(a, b PostDetail) int {
		return cmp.Or(b.PublishedAt.Compare(a.PublishedAt.Time), strings.Compare(a.Slug, b.Slug))
	})
	for i, post := range p.posts {
		p.postIndex[post.Slug] = i
	}
	slices.SortFunc(p.terms, func(a, b TermDetail) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.Slug, b.Slug))
	})
	for i, t := range p.terms {
		p.termIndex[t.Slug] = i
	}
	slices.SortFunc(p.blogCats, func(a, b BlogCategory) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Slug, b.Slug))
	})
	slices.SortFunc(p.glossaryCats, func(a, b GlossaryCategory) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Slug, b.Slug))
	})
	slices.SortFunc(p.roadmap, compareRoadmap)
}

// checkLayout rejects top-level directories other than blog, glossary and
// roadmap, and unknown subdirectories of blog and glossary, so that a typo
// in a directory name is an error rather than silently missing content.
// Files at the top level (README.md, FORMAT.md, …) are ignored.
func checkLayout(fsys fs.FS) error {
	allowed := map[string][]string{"": {"blog", "glossary", "roadmap"}, "blog": {"categories", "posts"}, "glossary": {"categories", "terms"}}
	for _, dir := range []string{".", "blog", "glossary"} {
		entries, err := fs.ReadDir(fsys, dir)
		if errors.Is(err, fs.ErrNotExist) && dir != "." {
			continue
		}
		if err != nil {
			return fmt.Errorf("knowledge: read %s: %w", dir, err)
		}
		key := strings.TrimPrefix(dir, ".")
		for _, e := range entries {
			if !e.IsDir() {
				if key != "" {
					return &ParseError{File: path.Join(dir, e.Name()), Msg: "unexpected file: " + dir + "/ holds only the directories " + strings.Join(allowed[key], " and ")}
				}
				continue
			}
			if !slices.Contains(allowed[key], e.Name()) {
				return &ParseError{File: path.Join(key, e.Name()), Msg: "unknown directory: expected one of " + strings.Join(allowed[key], ", ")}
			}
		}
	}
	return nil
}

// readDir parses every *.md file of dir, in name order. A missing dir is
// empty; any other entry (a subdirectory, a file of another type) is an error.
func readDir(fsys fs.FS, dir string) ([]*document, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("knowledge: read %s: %w", dir, err)
	}
	var docs []*document
	var errs []error
	for _, e := range entries {
		name := path.Join(dir, e.Name())
		if e.IsDir() || path.Ext(e.Name()) != ".md" {
			errs = append(errs, &ParseError{File: name, Msg: "unexpected entry: only .md files belong here"})
			continue
		}
		src, err := fs.ReadFile(fsys, name)
		if err != nil {
			errs = append(errs, fmt.Errorf("knowledge: read %s: %w", name, err))
			continue
		}
		d, err := parseDocument(name, src)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		docs = append(docs, d)
	}
	return docs, errors.Join(errs...)
}

// unwrap joins the lines of each paragraph of s with single spaces and the
// paragraphs with blank lines, so hard-wrapped source text becomes one line
// per paragraph.
func unwrap(s string) string {
	var paras []string
	for _, block := range strings.Split(strings.TrimSpace(s), "\n\n") {
		if f := strings.Fields(block); len(f) > 0 {
			paras = append(paras, strings.Join(f, " "))
		}
	}
	return strings.Join(paras, "\n\n")
}
