package knowledge_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/tradekit/tradekit"
	"github.com/tradekit/tradekit/knowledge"
)

// today is the date the embedded content was written against.
var today = time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)

// mustLoad returns the embedded pack or stops the test.
func mustLoad(tb testing.TB) *knowledge.Pack {
	tb.Helper()
	p, err := knowledge.Load()
	if err != nil {
		tb.Fatalf("Load() error: %v", err)
	}
	return p
}

// mustParse parses fsys or stops the test.
func mustParse(tb testing.TB, fsys fstest.MapFS) *knowledge.Pack {
	tb.Helper()
	p, err := knowledge.Parse(fsys)
	if err != nil {
		tb.Fatalf("Parse() error: %v", err)
	}
	return p
}

// file makes a MapFS entry from lines.
func file(lines ...string) *fstest.MapFile {
	return &fstest.MapFile{Data: []byte(strings.Join(lines, "\n") + "\n")}
}

// smallPack is a valid pack whose every expected value below is written by
// hand (ids computed independently with Python's uuid.uuid5).
func smallPack() fstest.MapFS {
	return fstest.MapFS{
		"FORMAT.md":                     file("ignored: top-level files are not content"),
		"blog/categories/news.md":       file("---", "name: News", "slug: news", "---"),
		"blog/categories/indicators.md": file("---", "name: Indicators", "slug: indicators", "---", "Editors' note."),
		"blog/categories/empty.md":      file("---", "name: Announcements", "slug: announcements", "---"),
		"glossary/categories/stats.md":  file("---", "name: Statistics", "slug: stats", "---"),
		"glossary/categories/zother.md": file("---", "name: Other", "slug: other", "---"),
		"glossary/terms/median.md":      file("---", "term: median", "slug: median", "category: stats", "related: [mean]", "---", "The middle value", "of a sorted sample."),
		"glossary/terms/mean.md":        file("---", "term: Mean", "slug: mean", "category: stats", "related: [median]", "---", "The sum divided by", "the count.", "", "Second paragraph."),
		"glossary/terms/mode.md":        file("---", "term: Mode", "slug: mode", "category: other", "---", "The most frequent value."),
		"roadmap/alpha.md":              file("---", "title: Alpha", "slug: alpha", "status: released", "category: market_data", "releasedAt: 2026-05-05T10:00:00Z", "votes: 12", `routes: [GET /api/v1/market-data/assets, GET /api/v1/indicators/asset/:assetId?indicator=RSI&params={"period":14}]`, "packages: [marketdata, marketdata/calendar]", "---", "Shipped."),
		"roadmap/beta.md":               file("---", "title: Beta", "slug: beta", "status: planned", "category: copy_trading", "estimatedRelease: 2027-Q2", "votes: 3", "---", "Later."),
		"roadmap/gamma.md":              file("---", "title: Gamma", "slug: gamma", "status: in_progress", "category: platform", "estimatedRelease: 2026-Q4", "votes: 0", "---", "Now."),
		"blog/posts/hello.md": file("---", "title: Hello: a first post", "slug: hello", "category: news",
			"tags: [intro, platform]", "featured: true", "publishedAt: 2026-03-01T09:00:00Z", "---",
			"# Heading", "", "First paragraph,", "wrapped.", "", "Second."),
		"blog/posts/rsi.md": file("---", "title: RSI", "slug: rsi", "category: indicators", "tags: [rsi]",
			"publishedAt: 2026-04-01", "excerpt: \"Given: excerpt\"", "---", "Body."),
		"blog/posts/macd.md": file("---", "# a comment", "", "title: MACD", "slug: macd", "category: indicators",
			"tags: [macd, intro]", "featured: false", "publishedAt: 2026-02-01T10:00:00+02:00", "---", "Body."),
	}
}

func slugsOf(posts []knowledge.Post) []string {
	out := []string{}
	for _, p := range posts {
		out = append(out, p.Slug)
	}
	return out
}

func TestPostsFilter(t *testing.T) {
	p := mustParse(t, smallPack())
	tests := []struct {
		name string
		f    knowledge.PostFilter
		want []string
	}{
		{"all newest first", knowledge.PostFilter{}, []string{"rsi", "hello", "macd"}},
		{"category", knowledge.PostFilter{Category: "indicators"}, []string{"rsi", "macd"}},
		{"category without posts", knowledge.PostFilter{Category: "announcements"}, []string{}},
		{"unknown category", knowledge.PostFilter{Category: "nope"}, []string{}},
		{"tag", knowledge.PostFilter{Tag: "intro"}, []string{"hello", "macd"}},
		{"unknown tag", knowledge.PostFilter{Tag: "nope"}, []string{}},
		{"featured", knowledge.PostFilter{FeaturedOnly: true}, []string{"hello"}},
		{"category and tag", knowledge.PostFilter{Category: "indicators", Tag: "intro"}, []string{"macd"}},
		{"category and featured", knowledge.PostFilter{Category: "indicators", FeaturedOnly: true}, []string{}},
		{"before", knowledge.PostFilter{Before: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}, []string{"hello", "macd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := p.Posts(tt.f)
			if got == nil {
				t.Fatal("Posts() = nil, want a non-nil slice")
			}
			if diff := cmp.Diff(tt.want, slugsOf(got)); diff != "" {
				t.Errorf("Posts(%+v) slugs mismatch (-want +got):\n%s", tt.f, diff)
			}
		})
	}
}

func TestSmallPackValues(t *testing.T) {
	p := mustParse(t, smallPack())

	rsi, err := p.Post("rsi")
	if err != nil {
		t.Fatal(err)
	}
	if rsi.Excerpt != "Given: excerpt" || rsi.Content != "Body." || !rsi.PublishedAt.Equal(time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Post(rsi) = %+v", rsi)
	}
	macd, _ := p.Post("macd")
	if want := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC); !macd.PublishedAt.Equal(want) || macd.PublishedAt.Location() != time.UTC {
		t.Errorf("macd PublishedAt = %v, want %v in UTC", macd.PublishedAt, want)
	}

	wantBlog := []knowledge.BlogCategory{
		{ID: "5fb86786-bf5d-5775-93d5-1f72b01b310e", Name: "Announcements", Slug: "announcements", PostCount: 0},
		{ID: "43555983-c2f5-525a-82b4-26d4736b3ce9", Name: "Indicators", Slug: "indicators", PostCount: 2},
		{ID: "ccc3acb0-e019-53fc-807c-1d76db073339", Name: "News", Slug: "news", PostCount: 1},
	}
	if diff := cmp.Diff(wantBlog, p.BlogCategories()); diff != "" {
		t.Errorf("BlogCategories() mismatch (-want +got):\n%s", diff)
	}
	gotTerms := []string{}
	for _, term := range p.Terms() {
		gotTerms = append(gotTerms, term.Name)
	}
	if diff := cmp.Diff([]string{"Mean", "median", "Mode"}, gotTerms); diff != "" {
		t.Errorf("Terms() order mismatch (-want +got):\n%s", diff)
	}
	var counts []int
	for _, c := range p.GlossaryCategories() {
		counts = append(counts, c.TermCount)
	}
	if diff := cmp.Diff([]int{1, 2}, counts); diff != "" { // Other, Statistics
		t.Errorf("GlossaryCategories() counts mismatch (-want +got):\n%s", diff)
	}
	var order []string
	for _, it := range p.Roadmap() {
		order = append(order, it.Title)
	}
	if diff := cmp.Diff([]string{"Gamma", "Beta", "Alpha"}, order); diff != "" {
		t.Errorf("Roadmap() order mismatch (-want +got):\n%s", diff)
	}
	alpha := p.Roadmap()[2]
	wantRoutes := []string{"GET /api/v1/market-data/assets", `GET /api/v1/indicators/asset/:assetId?indicator=RSI&params={"period":14}`}
	if diff := cmp.Diff(wantRoutes, alpha.Routes); diff != "" {
		t.Errorf("alpha Routes mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"marketdata", "marketdata/calendar"}, alpha.Packages); diff != "" {
		t.Errorf("alpha Packages mismatch (-want +got):\n%s", diff)
	}
	if beta := p.Roadmap()[1]; len(beta.Routes) != 0 || len(beta.Packages) != 0 {
		t.Errorf("beta names routes %q and packages %q, want none", beta.Routes, beta.Packages)
	}
}

func TestNotFound(t *testing.T) {
	p := mustParse(t, smallPack())
	_, errPost := p.Post("missing")
	_, errTerm := p.Term("missing")
	for _, err := range []error{errPost, errTerm} {
		if !errors.Is(err, knowledge.ErrNotFound) || !errors.Is(err, tradekit.ErrNotFound) {
			t.Errorf("error %v does not wrap knowledge.ErrNotFound and tradekit.ErrNotFound", err)
		}
		if !strings.Contains(err.Error(), `"missing"`) {
			t.Errorf("error %q does not name the slug", err)
		}
	}
}

func TestReturnsCopies(t *testing.T) {
	p := mustParse(t, smallPack())
	p.Posts(knowledge.PostFilter{})[1].Tags[0] = "changed"
	post, _ := p.Post("hello")
	post.Tags[1] = "changed"
	term, _ := p.Term("mean")
	term.RelatedTerms[0] = "changed"
	p.Roadmap()[0].Title = "changed"
	p.Roadmap()[2].Routes[0] = "changed"
	p.Roadmap()[2].Packages[0] = "changed"
	p.BlogCategories()[0].PostCount = 99

	post, _ = p.Post("hello")
	term, _ = p.Term("mean")
	if diff := cmp.Diff([]string{"intro", "platform"}, post.Tags); diff != "" {
		t.Errorf("pack changed through a returned post (-want +got):\n%s", diff)
	}
	if alpha := p.Roadmap()[2]; alpha.Routes[0] != "GET /api/v1/market-data/assets" || alpha.Packages[0] != "marketdata" {
		t.Errorf("pack changed through a returned roadmap item: %q, %q", alpha.Routes, alpha.Packages)
	}
	if term.RelatedTerms[0] != "median" || p.Roadmap()[0].Title != "Gamma" || p.BlogCategories()[0].PostCount != 0 {
		t.Error("pack changed through a returned value")
	}
}

// TestIDs checks ids against UUIDs computed independently with Python:
// uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, "https://github.com/tradekit/tradekit/knowledge"), kind + ":" + slug).
func TestIDs(t *testing.T) {
	p := mustLoad(t)
	post, err := p.Post("rsi-wilder-smoothing")
	if err != nil {
		t.Fatal(err)
	}
	term, err := p.Term("average-true-range")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"post": post.ID, "term": term.ID}
	for _, c := range p.BlogCategories() {
		got["blog-category:"+c.Slug] = c.ID
	}
	for _, c := range p.GlossaryCategories() {
		got["glossary-category:"+c.Slug] = c.ID
	}
	for _, it := range p.Roadmap() {
		if it.Title == "Intraday bars" {
			got["roadmap"] = it.ID
		}
	}
	want := map[string]string{
		"post":                     "b4c6e400-6601-5c8e-bf46-c2581e5ae1b5",
		"term":                     "c72e12bf-5c6c-5259-8a7b-6589b304838e",
		"blog-category:indicators": "43555983-c2f5-525a-82b4-26d4736b3ce9",
		"glossary-category:risk":   "fc3e4c53-ebaa-5352-b1d0-d8f74f56d2c3",
		"roadmap":                  "eadadf44-d278-5ec0-96a3-0e272a86d957",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("id of %s = %q, want %q", k, got[k], w)
		}
	}
	// Parsing the same content again gives the same ids.
	again := mustParse(t, smallPack())
	once := mustParse(t, smallPack())
	if diff := cmp.Diff(once.Posts(knowledge.PostFilter{}), again.Posts(knowledge.PostFilter{})); diff != "" {
		t.Errorf("ids differ between parses:\n%s", diff)
	}
}

func mustJSON(tb testing.TB, v any) string {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		tb.Fatalf("json.MarshalIndent(%T) error: %v", v, err)
	}
	return string(b)
}

func TestJSONShapes(t *testing.T) {
	p := mustParse(t, smallPack())
	post, _ := p.Post("hello")
	term, _ := p.Term("mean")
	roadmap := p.Roadmap()
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"post list item", p.Posts(knowledge.PostFilter{FeaturedOnly: true})[0], `{
  "id": "328dc65c-2f64-57d4-bbf1-8e61c72d33f9",
  "title": "Hello: a first post",
  "slug": "hello",
  "excerpt": "First paragraph, wrapped.",
  "category": "news",
  "tags": [
    "intro",
    "platform"
  ],
  "featured": true,
  "publishedAt": "2026-03-01T09:00:00.000Z"
}`},
		{"single post", post, `{
  "id": "328dc65c-2f64-57d4-bbf1-8e61c72d33f9",
  "title": "Hello: a first post",
  "slug": "hello",
  "category": "news",
  "tags": [
    "intro",
    "platform"
  ],
  "featured": true,
  "publishedAt": "2026-03-01T09:00:00.000Z",
  "content": "# Heading\n\nFirst paragraph,\nwrapped.\n\nSecond."
}`},
		{"post without tags", mustParse(t, fstest.MapFS{
			"blog/categories/news.md": file("---", "name: News", "slug: news", "---"),
			"blog/posts/bare.md":      file("---", "title: Bare", "slug: bare", "category: news", "publishedAt: 2026-01-02", "---", "Text."),
		}).Posts(knowledge.PostFilter{})[0], `{
  "id": "471e13a9-45ba-5768-8911-5104d5d3cd02",
  "title": "Bare",
  "slug": "bare",
  "excerpt": "Text.",
  "category": "news",
  "tags": [],
  "featured": false,
  "publishedAt": "2026-01-02T00:00:00.000Z"
}`},
		{"blog category", p.BlogCategories()[2], `{
  "id": "ccc3acb0-e019-53fc-807c-1d76db073339",
  "name": "News",
  "slug": "news",
  "postCount": 1
}`},
		{"glossary category", p.GlossaryCategories()[1], `{
  "id": "76d6429f-6d94-5ff3-8a16-78598e807a1c",
  "name": "Statistics",
  "slug": "stats",
  "termCount": 2
}`},
		{"term list item", p.Terms()[0], `{
  "id": "e10990ad-ff5c-5d7a-b070-7a1981c067e5",
  "term": "Mean",
  "slug": "mean",
  "definition": "The sum divided by the count.\n\nSecond paragraph.",
  "categoryId": "76d6429f-6d94-5ff3-8a16-78598e807a1c"
}`},
		{"single term", term, `{
  "id": "e10990ad-ff5c-5d7a-b070-7a1981c067e5",
  "term": "Mean",
  "slug": "mean",
  "definition": "The sum divided by the count.\n\nSecond paragraph.",
  "categoryId": "76d6429f-6d94-5ff3-8a16-78598e807a1c",
  "relatedTerms": [
    "median"
  ]
}`},
		{"roadmap released", roadmap[2], `{
  "id": "720c78b6-c4b8-51dd-ab92-b7c8867e2d88",
  "title": "Alpha",
  "description": "Shipped.",
  "status": "released",
  "category": "market_data",
  "releasedAt": "2026-05-05T10:00:00.000Z",
  "votes": 12
}`},
		{"roadmap planned", roadmap[1], `{
  "id": "2dc616c3-4c69-5e6a-9175-107d17c54934",
  "title": "Beta",
  "description": "Later.",
  "status": "planned",
  "category": "copy_trading",
  "estimatedRelease": "2027-Q2",
  "votes": 3
}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, mustJSON(t, tt.v)); diff != "" {
				t.Errorf("JSON mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestTimestamp(t *testing.T) {
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC), `"2026-03-01T09:00:00.000Z"`},
		{time.Date(2026, 3, 1, 9, 0, 0, 123456789, time.UTC), `"2026-03-01T09:00:00.123Z"`},
		{time.Date(2026, 3, 1, 11, 0, 0, 0, time.FixedZone("CEST", 2*3600)), `"2026-03-01T09:00:00.000Z"`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(knowledge.Timestamp{Time: tt.in})
		if err != nil || string(b) != tt.want {
			t.Errorf("Marshal(%v) = %s, %v; want %s", tt.in, b, err, tt.want)
		}
		if text, err := (knowledge.Timestamp{Time: tt.in}).MarshalText(); err != nil || `"`+string(text)+`"` != tt.want {
			t.Errorf("MarshalText(%v) = %s, %v; want %s unquoted", tt.in, text, err, tt.want)
		}
		var back knowledge.Timestamp
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(tt.in.Truncate(time.Millisecond)) {
			t.Errorf("Unmarshal(%s) = %v, %v; want %v", b, back, err, tt.in)
		}
	}
	var ts knowledge.Timestamp
	for _, bad := range []string{`123`, `"2026-03-01"`, `"yesterday"`} {
		if err := json.Unmarshal([]byte(bad), &ts); err == nil {
			t.Errorf("Unmarshal(%s) = nil error, want an error", bad)
		}
	}
}

// countFiles counts the .md files of a content directory straight from disk,
// independently of the parser.
func countFiles(tb testing.TB, dir string) int {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join("content", dir, "*.md"))
	if err != nil {
		tb.Fatal(err)
	}
	return len(m)
}

func TestEmbeddedPack(t *testing.T) {
	p := mustLoad(t)
	if again := mustLoad(t); again != p {
		t.Error("Load() parsed the pack twice")
	}

	posts := p.Posts(knowledge.PostFilter{})
	terms := p.Terms()
	roadmap := p.Roadmap()
	if n := countFiles(t, "blog/posts"); len(posts) != n || n < 8 {
		t.Errorf("%d posts, %d post files: want equal and at least 8", len(posts), n)
	}
	if n := countFiles(t, "glossary/terms"); len(terms) != n || n < 60 {
		t.Errorf("%d terms, %d term files: want equal and at least 60", len(terms), n)
	}
	if n := countFiles(t, "roadmap"); len(roadmap) != n {
		t.Errorf("%d roadmap items, %d files", len(roadmap), n)
	}

	featuredFiles := 0
	for _, name := range must(filepath.Glob("content/blog/posts/*.md")) {
		if strings.Contains(string(must(os.ReadFile(name))), "\nfeatured: true\n") {
			featuredFiles++
		}
	}
	if got := len(p.Posts(knowledge.PostFilter{FeaturedOnly: true})); got != featuredFiles || got == 0 {
		t.Errorf("%d featured posts, %d files say featured: true", got, featuredFiles)
	}

	total := 0
	for _, c := range p.BlogCategories() {
		n := len(p.Posts(knowledge.PostFilter{Category: c.Slug}))
		if n != c.PostCount || n == 0 {
			t.Errorf("blog category %s: PostCount %d, filter finds %d posts; want equal and > 0", c.Slug, c.PostCount, n)
		}
		total += n
	}
	if total != len(posts) {
		t.Errorf("posts per category sum to %d, want %d", total, len(posts))
	}

	for _, post := range posts {
		d, err := p.Post(post.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if words := len(strings.Fields(d.Content)); words < 600 || words > 1200 {
			t.Errorf("post %s has %d words, want 600..1200", post.Slug, words)
		}
		if post.Excerpt == "" || len(post.Tags) == 0 || post.PublishedAt.After(today) {
			t.Errorf("post %s: excerpt %q, tags %v, publishedAt %v", post.Slug, post.Excerpt, post.Tags, post.PublishedAt)
		}
		for _, tag := range post.Tags {
			if !slices.Contains(slugsOf(p.Posts(knowledge.PostFilter{Tag: tag})), post.Slug) {
				t.Errorf("tag filter %q misses post %s", tag, post.Slug)
			}
		}
	}

	catIDs := map[string]int{}
	for _, c := range p.GlossaryCategories() {
		catIDs[c.ID] = c.TermCount
	}
	perCat := map[string]int{}
	for _, term := range terms {
		perCat[term.CategoryID]++
		d, err := p.Term(term.Slug)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.RelatedTerms) == 0 {
			t.Errorf("term %s has no related terms", term.Slug)
		}
		for _, r := range d.RelatedTerms {
			if _, err := p.Term(r); err != nil {
				t.Errorf("term %s: related %q: %v", term.Slug, r, err)
			}
		}
	}
	if diff := cmp.Diff(catIDs, perCat); diff != "" {
		t.Errorf("TermCount per category mismatch (-counted +terms):\n%s", diff)
	}

	statuses := map[knowledge.Status]int{}
	for _, it := range roadmap {
		statuses[it.Status]++
		switch it.Status {
		case knowledge.StatusReleased:
			if it.ReleasedAt.IsZero() || it.ReleasedAt.After(today) || it.EstimatedRelease != "" {
				t.Errorf("released item %q: releasedAt %v, estimatedRelease %q", it.Title, it.ReleasedAt, it.EstimatedRelease)
			}
		default:
			if it.EstimatedRelease < "2026-Q4" || !it.ReleasedAt.IsZero() {
				t.Errorf("%s item %q: estimatedRelease %q is before today's quarter 2026-Q4", it.Status, it.Title, it.EstimatedRelease)
			}
		}
	}
	for _, s := range []knowledge.Status{knowledge.StatusPlanned, knowledge.StatusInProgress, knowledge.StatusReleased} {
		if statuses[s] == 0 {
			t.Errorf("no roadmap item is %s", s)
		}
	}
	// One thing is built at a time; the rest of what comes next is planned.
	if n := statuses[knowledge.StatusInProgress]; n > 1 {
		t.Errorf("%d roadmap items are in_progress, want at most 1", n)
	}
	// What the roadmap calls released must name what serves it; the server's
	// TestRoadmapReleasedIsServed checks that each route answers and each
	// package exists.
	for _, it := range roadmap {
		if it.Status == knowledge.StatusReleased && len(it.Routes) == 0 && len(it.Packages) == 0 {
			t.Errorf("released item %q names no routes and no packages", it.Title)
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestExcerpt(t *testing.T) {
	tests := []struct {
		name string
		body []string
		want string
	}{
		{"first paragraph", []string{"One", "two.", "", "Three."}, "One two."},
		{"skips heading, lists, quote, fence, table", []string{"## Title", "", "1. first", "2. second", "", "- item", "",
			"> quoted", "", "```", "code", "```", "", "| a | b |", "", "2026 was a year", "of prose."}, "2026 was a year of prose."},
		{"no prose", []string{"# Only a heading"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := append([]string{"---", "title: T", "slug: x", "category: news", "publishedAt: 2026-01-02", "---"}, tt.body...)
			p := mustParse(t, fstest.MapFS{
				"blog/categories/news.md": file("---", "name: News", "slug: news", "---"),
				"blog/posts/x.md":         file(lines...),
			})
			if got := p.Posts(knowledge.PostFilter{})[0].Excerpt; got != tt.want {
				t.Errorf("Excerpt = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestConcurrentUse runs readers in parallel; run with -race.
func TestConcurrentUse(t *testing.T) {
	for i := 0; i < 4; i++ {
		t.Run("reader", func(t *testing.T) {
			t.Parallel()
			p := mustLoad(t)
			for j := 0; j < 50; j++ {
				_ = p.Posts(knowledge.PostFilter{Tag: "atr"})
				if _, err := p.Term("average-true-range"); err != nil {
					t.Error(err)
				}
				_ = p.Roadmap()
			}
		})
	}
}
