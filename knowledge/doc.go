// Package knowledge serves Tradekit's blog, financial glossary and public
// roadmap from a content pack: a directory of Markdown files with front
// matter. The project's own pack is embedded in the binary ([Load]); a
// deployer can serve another one from any [io/fs.FS] ([Parse]).
//
// Usage:
//
//	pack, err := knowledge.Load()
//	if err != nil {
//		return err // only a build with broken content fails here
//	}
//	posts := pack.Posts(knowledge.PostFilter{Category: "indicators"})
//	post, err := pack.Post("rsi-wilder-smoothing") // errors.Is(err, tradekit.ErrNotFound) if absent
//	term, err := pack.Term("average-true-range")   // term.RelatedTerms are slugs of other terms
//
// # Pack layout
//
//	blog/categories/*.md       name, slug
//	blog/posts/*.md            title, slug, category, publishedAt; tags, featured, excerpt; body: Markdown
//	glossary/categories/*.md   name, slug
//	glossary/terms/*.md        term, slug, category; related; body: the definition
//	roadmap/*.md               title, slug, status, category, votes, releasedAt | estimatedRelease; routes, packages; body: description
//
// Files at the top of the pack are ignored; unknown directories and non-.md
// files are errors.
//
// # Front matter
//
// Each file starts with a line "---", then one "key: value" per line
// (blank lines and "#" comments allowed), then "---", then the body:
//
//	---
//	term: Average True Range (ATR)
//	slug: average-true-range
//	category: indicators
//	related: [true-range, wilder-smoothing]
//	---
//	The Wilder-smoothed average of the true range ...
//
// A value is the rest of the line after the first colon, trimmed; enclosing
// double quotes are removed. Lists are "[a, b]" of slugs, except a roadmap
// item's routes ("[GET /api/v1/roadmap]") and packages ("[indicators]"),
// which name what serves it and are not part of its JSON. Booleans are
// "true" or "false". Times are "2026-03-01" (midnight UTC) or RFC 3339
// ("2026-03-01T09:00:00Z"). Slugs are lowercase letters and digits in
// groups joined by single hyphens. content/FORMAT.md in this package has the
// full table of keys.
//
// # Validation
//
// [Parse] checks everything before returning a pack: a missing or unclosed
// front matter, unknown, repeated or missing keys, malformed values, bad
// dates, an unknown category, a related term that does not exist, a
// duplicate slug within a kind, a roadmap status outside planned,
// in_progress and released, a released item without releasedAt or an
// unreleased one without an estimatedRelease "YYYY-Qn", a malformed route or
// package path. Each problem is a [*ParseError] with the file and line; all
// of them wrap [tradekit.ErrInvalid].
//
// # Identifiers and order
//
// The API's id of every post, term, category and roadmap item is a version 5
// UUID of the kind and slug under a fixed namespace:
//
//	id = UUIDv5(namespace, kind + ":" + slug)   // SHA-1, RFC 9562
//
// so ids are stable across runs, machines and content edits (but not slug
// renames). Posts are listed newest first, terms by name, categories by
// name, and the roadmap as in progress, planned, then released.
//
// # JSON
//
// The types carry the API's field names. List and single shapes are
// separate types ([Post] and [PostDetail], [Term] and [TermDetail]), so
// fields the spec leaves out of a shape never appear in it. [Timestamp]
// encodes as "2026-03-01T09:00:00.000Z".
//
// A [Pack] is immutable and safe for concurrent use; its methods return
// copies. Filters on an unknown category or tag return an empty list, not an
// error: validating query parameters is the server's job.
package knowledge
