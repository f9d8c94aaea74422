package knowledge

import (
	"cmp"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tradekit/tradekit"
)

// ErrNotFound is returned (wrapped, with the slug) by [Pack.Post] and
// [Pack.Term] for a slug the pack does not hold. It wraps
// [tradekit.ErrNotFound], so the server answers 404.
var ErrNotFound = fmt.Errorf("knowledge: %w", tradekit.ErrNotFound)

// Status is the state of a roadmap item.
type Status string

// The roadmap statuses of the spec.
const (
	StatusPlanned    Status = "planned"
	StatusInProgress Status = "in_progress"
	StatusReleased   Status = "released"
)

// Post is a blog post in the list shape of the API: everything but the
// Markdown content, with an excerpt instead.
type Post struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Slug        string    `json:"slug"`
	Excerpt     string    `json:"excerpt"`
	Category    string    `json:"category"` // the blog category's slug
	Tags        []string  `json:"tags"`     // never nil
	Featured    bool      `json:"featured"`
	PublishedAt Timestamp `json:"publishedAt"`
}

// PostDetail is a single blog post as the API returns it: the list fields
// with the Markdown Content in place of the excerpt. Excerpt is kept for Go
// callers (e.g. a page description) but is not encoded.
type PostDetail struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Slug        string    `json:"slug"`
	Excerpt     string    `json:"-"`
	Category    string    `json:"category"`
	Tags        []string  `json:"tags"`
	Featured    bool      `json:"featured"`
	PublishedAt Timestamp `json:"publishedAt"`
	Content     string    `json:"content"` // Markdown, without the front matter
}

// Summary returns the list shape of p.
func (p PostDetail) Summary() Post {
	return Post{
		ID: p.ID, Title: p.Title, Slug: p.Slug, Excerpt: p.Excerpt, Category: p.Category,
		Tags: slices.Clone(p.Tags), Featured: p.Featured, PublishedAt: p.PublishedAt,
	}
}

// BlogCategory is a blog category with the number of posts filed under it.
type BlogCategory struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	PostCount int    `json:"postCount"`
}

// GlossaryCategory is a glossary category with the number of its terms.
type GlossaryCategory struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	TermCount int    `json:"termCount"`
}

// Term is a glossary term in the list shape of the API.
type Term struct {
	ID         string `json:"id"`
	Name       string `json:"term"` // the term itself, e.g. "Average True Range (ATR)"
	Slug       string `json:"slug"`
	Definition string `json:"definition"`
	CategoryID string `json:"categoryId"` // the ID of a [GlossaryCategory]
}

// TermDetail is a single glossary term: the list fields plus the slugs of
// related terms, each of which exists in the same pack.
type TermDetail struct {
	Term
	RelatedTerms []string `json:"relatedTerms"` // never nil
}

// RoadmapItem is an entry of the public roadmap. Exactly one of
// EstimatedRelease ("YYYY-Qn", unreleased items) and ReleasedAt (released
// items) is set; the other is left out of the JSON.
type RoadmapItem struct {
	ID               string    `json:"id"`
	Title            string    `json:"title"`
	Description      string    `json:"description"`
	Status           Status    `json:"status"`
	Category         string    `json:"category"`
	EstimatedRelease string    `json:"estimatedRelease,omitempty"`
	ReleasedAt       Timestamp `json:"releasedAt,omitzero"`
	Votes            int       `json:"votes"`
}

// PostFilter selects blog posts. Zero fields select everything; set fields
// combine with AND. A Category or Tag the pack does not know matches no post
// (the result is empty, not an error): validating query parameters is the
// caller's job.
type PostFilter struct {
	Category     string    // category slug, exact match
	Tag          string    // tag, exact match (tags are lowercase slugs)
	FeaturedOnly bool      // only posts marked featured
	Before       time.Time // if not zero, only posts published at or before it (hides scheduled posts)
}

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
	var errs []error
	docs := func(dir string) []*document {
		out, err := readDir(fsys, dir)
		if err != nil {
			errs = append(errs, err)
		}
		return out
	}
	p := &Pack{postIndex: map[string]int{}, termIndex: map[string]int{}}
	slugs := map[string]map[string]string{} // kind -> slug -> file
	claim := func(kind string, d *document, slug string) bool {
		if slug == "" {
			return false
		}
		if slugs[kind] == nil {
			slugs[kind] = map[string]string{}
		}
		if first, dup := slugs[kind][slug]; dup {
			errs = append(errs, d.errorf(d.line("slug"), "duplicate %s slug %q (also in %s)", kind, slug, first))
			return false
		}
		slugs[kind][slug] = d.file
		return true
	}

	blogCatIndex := map[string]int{}
	for _, d := range docs(dirBlogCategories) {
		c := BlogCategory{Name: d.str("name", true), Slug: d.slug("slug", true)}
		c.ID = newID("blog-category", c.Slug)
		if err := d.finish(false); err != nil {
			errs = append(errs, err)
			continue
		}
		if claim("blog category", d, c.Slug) {
			blogCatIndex[c.Slug] = len(p.blogCats)
			p.blogCats = append(p.blogCats, c)
		}
	}
	glossCatIndex := map[string]int{}
	for _, d := range docs(dirGlossaryCategories) {
		c := GlossaryCategory{Name: d.str("name", true), Slug: d.slug("slug", true)}
		c.ID = newID("glossary-category", c.Slug)
		if err := d.finish(false); err != nil {
			errs = append(errs, err)
			continue
		}
		if claim("glossary category", d, c.Slug) {
			glossCatIndex[c.Slug] = len(p.glossaryCats)
			p.glossaryCats = append(p.glossaryCats, c)
		}
	}

	for _, d := range docs(dirPosts) {
		post := PostDetail{
			Title:       d.str("title", true),
			Slug:        d.slug("slug", true),
			Category:    d.slug("category", true),
			Tags:        d.list("tags", false),
			Featured:    d.boolean("featured"),
			PublishedAt: d.timestamp("publishedAt", true),
			Excerpt:     unwrap(d.str("excerpt", false)),
		}
		post.ID = newID("post", post.Slug)
		if err := d.finish(true); err != nil {
			errs = append(errs, err)
			continue
		}
		post.Content = d.body
		if post.Excerpt == "" {
			post.Excerpt = firstParagraph(d.body)
		}
		i, ok := blogCatIndex[post.Category]
		if !ok {
			errs = append(errs, d.errorf(d.line("category"), "unknown blog category %q (no file in %s declares it)", post.Category, dirBlogCategories))
			continue
		}
		if claim("post", d, post.Slug) {
			p.blogCats[i].PostCount++
			p.posts = append(p.posts, post)
		}
	}

	type pendingTerm struct {
		d    *document
		line int
	}
	var pending []pendingTerm
	for _, d := range docs(dirTerms) {
		t := TermDetail{
			Term: Term{
				Name: d.str("term", true),
				Slug: d.slug("slug", true),
			},
			RelatedTerms: d.list("related", false),
		}
		t.ID = newID("term", t.Slug)
		cat := d.slug("category", true)
		if err := d.finish(true); err != nil {
			errs = append(errs, err)
			continue
		}
		t.Definition = unwrap(d.body)
		i, ok := glossCatIndex[cat]
		if !ok {
			errs = append(errs, d.errorf(d.line("category"), "unknown glossary category %q (no file in %s declares it)", cat, dirGlossaryCategories))
			continue
		}
		if slices.Contains(t.RelatedTerms, t.Slug) {
			errs = append(errs, d.errorf(d.line("related"), "term %q lists itself as related", t.Slug))
			continue
		}
		if claim("term", d, t.Slug) {
			t.CategoryID = p.glossaryCats[i].ID
			p.glossaryCats[i].TermCount++
			p.terms = append(p.terms, t)
			pending = append(pending, pendingTerm{d, d.line("related")})
		}
	}

	for _, d := range docs(dirRoadmap) {
		item := RoadmapItem{
			Title:    d.str("title", true),
			Status:   Status(d.str("status", true)),
			Category: d.str("category", true),
			Votes:    d.integer("votes", true),
		}
		slug := d.slug("slug", true)
		item.ID = newID("roadmap", slug)
		released := item.Status == StatusReleased
		switch item.Status {
		case StatusPlanned, StatusInProgress, StatusReleased, "":
		default:
			d.fail(d.line("status"), "status must be planned, in_progress or released, got %q", item.Status)
		}
		if item.Category != "" && !roadmapCatPattern.MatchString(item.Category) {
			d.fail(d.line("category"), "category %q must be lowercase words joined by underscores", item.Category)
		}
		if released {
			item.ReleasedAt = d.timestamp("releasedAt", true)
			if _, ok := d.fields["estimatedRelease"]; ok {
				d.fail(d.line("estimatedRelease"), "a released item has releasedAt, not estimatedRelease")
			}
		} else {
			item.EstimatedRelease = d.str("estimatedRelease", true)
			if item.EstimatedRelease != "" && !quarterPattern.MatchString(item.EstimatedRelease) {
				d.fail(d.line("estimatedRelease"), "estimatedRelease must be YYYY-Qn with n in 1..4, got %q", item.EstimatedRelease)
			}
			if _, ok := d.fields["releasedAt"]; ok {
				d.fail(d.line("releasedAt"), "only a released item has releasedAt")
			}
		}
		if err := d.finish(true); err != nil {
			errs = append(errs, err)
			continue
		}
		item.Description = unwrap(d.body)
		if claim("roadmap", d, slug) {
			p.roadmap = append(p.roadmap, item)
		}
	}

	// Cross references need every term: check them last.
	for i, pt := range pending {
		for _, r := range p.terms[i].RelatedTerms {
			if _, ok := slugs["term"][r]; !ok {
				errs = append(errs, pt.d.errorf(pt.line, "related term %q does not exist", r))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	slices.SortStableFunc(p.posts, func(a, b PostDetail) int {
		if c := b.PublishedAt.Compare(a.PublishedAt.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Slug, b.Slug)
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
	return p, nil
}

// statusRank orders roadmap statuses: work under way first, released last.
var statusRank = map[Status]int{StatusInProgress: 0, StatusPlanned: 1, StatusReleased: 2}

// compareRoadmap orders items by status (in progress, planned, released);
// unreleased items by estimated quarter, then votes (most first); released
// items newest first; ties by title.
func compareRoadmap(a, b RoadmapItem) int {
	if c := cmp.Compare(statusRank[a.Status], statusRank[b.Status]); c != 0 {
		return c
	}
	if a.Status == StatusReleased {
		if c := b.ReleasedAt.Compare(a.ReleasedAt.Time); c != 0 {
			return c
		}
	} else {
		if c := strings.Compare(a.EstimatedRelease, b.EstimatedRelease); c != 0 {
			return c
		}
		if c := cmp.Compare(b.Votes, a.Votes); c != 0 {
			return c
		}
	}
	return strings.Compare(a.Title, b.Title)
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

// orderedItem matches the start of an ordered Markdown list item.
var orderedItem = regexp.MustCompile(`^[0-9]+[.)]\s`)

// firstParagraph returns the first paragraph of Markdown body that is prose:
// not a heading, a list, a quote, a table, a fence or HTML.
func firstParagraph(body string) string {
	for _, block := range strings.Split(body, "\n\n") {
		block = strings.TrimSpace(block)
		if block == "" || strings.ContainsAny(block[:1], "#-*+>|`<") || orderedItem.MatchString(block) {
			continue
		}
		return unwrap(block)
	}
	return ""
}

// Posts returns the blog posts that f selects, newest first (ties by slug),
// in the list shape. The result is never nil.
func (p *Pack) Posts(f PostFilter) []Post {
	out := make([]Post, 0, len(p.posts))
	for _, post := range p.posts {
		if f.Category != "" && post.Category != f.Category ||
			f.Tag != "" && !slices.Contains(post.Tags, f.Tag) ||
			f.FeaturedOnly && !post.Featured ||
			!f.Before.IsZero() && post.PublishedAt.After(f.Before) {
			continue
		}
		out = append(out, post.Summary())
	}
	return out
}

// Post returns the post with the given slug, with its Markdown content.
// An unknown slug gives an error wrapping [ErrNotFound].
func (p *Pack) Post(slug string) (PostDetail, error) {
	i, ok := p.postIndex[slug]
	if !ok {
		return PostDetail{}, fmt.Errorf("%w: no blog post %q", ErrNotFound, slug)
	}
	post := p.posts[i]
	post.Tags = slices.Clone(post.Tags)
	return post, nil
}

// BlogCategories returns every blog category with its PostCount, by name.
// Categories without posts are included, with a count of 0.
func (p *Pack) BlogCategories() []BlogCategory {
	return slices.Clone(p.blogCats)
}

// GlossaryCategories returns every glossary category with its TermCount,
// by name.
func (p *Pack) GlossaryCategories() []GlossaryCategory {
	return slices.Clone(p.glossaryCats)
}

// Terms returns every glossary term in the list shape, ordered by term
// (case-insensitively).
func (p *Pack) Terms() []Term {
	out := make([]Term, len(p.terms))
	for i, t := range p.terms {
		out[i] = t.Term
	}
	return out
}

// Term returns the glossary term with the given slug and its related terms.
// An unknown slug gives an error wrapping [ErrNotFound].
func (p *Pack) Term(slug string) (TermDetail, error) {
	i, ok := p.termIndex[slug]
	if !ok {
		return TermDetail{}, fmt.Errorf("%w: no glossary term %q", ErrNotFound, slug)
	}
	t := p.terms[i]
	t.RelatedTerms = slices.Clone(t.RelatedTerms)
	return t, nil
}

// Roadmap returns every roadmap item: in progress first, then planned (both
// by estimated quarter, then most votes), then released (newest first).
func (p *Pack) Roadmap() []RoadmapItem {
	return slices.Clone(p.roadmap)
}
