package knowledge

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
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

// BlogCategory is a blog category with the number of posts filed under it.
type BlogCategory struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	PostCount int    `json:"postCount"`
}

// blogCategories reads blog/categories.
func (ps *parser) blogCategories() {
	for _, d := range ps.docs(dirBlogCategories) {
		c := BlogCategory{Name: d.str("name", true), Slug: d.slug("slug", true)}
		if ps.ok(d.finish(false)) && ps.claim("blog category", d, c.Slug) {
			c.ID = newID("blog-category", c.Slug)
			ps.blogCat[c.Slug] = len(ps.pack.blogCats)
			ps.pack.blogCats = append(ps.pack.blogCats, c)
		}
	}
}

// posts reads blog/posts; categories must be read first.
func (ps *parser) posts() {
	for _, d := range ps.docs(dirPosts) {
		post := PostDetail{
			Title:       d.str("title", true),
			Slug:        d.slug("slug", true),
			Category:    d.slug("category", true),
			Tags:        d.list("tags", false),
			Featured:    d.boolean("featured"),
			PublishedAt: d.timestamp("publishedAt", true),
			Excerpt:     unwrap(d.str("excerpt", false)),
			Content:     d.body,
		}
		if !ps.ok(d.finish(true)) {
			continue
		}
		i, known := ps.blogCat[post.Category]
		if !known {
			ps.ok(d.errorf(d.line("category"), "unknown blog category %q (no file in %s declares it)", post.Category, dirBlogCategories))
			continue
		}
		if !ps.claim("post", d, post.Slug) {
			continue
		}
		post.ID = newID("post", post.Slug)
		if post.Excerpt == "" {
			post.Excerpt = firstParagraph(d.body)
		}
		ps.pack.blogCats[i].PostCount++
		ps.pack.posts = append(ps.pack.posts, post)
	}
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
