package knowledge

import (
	"fmt"
	"slices"
)

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

// GlossaryCategory is a glossary category with the number of its terms.
type GlossaryCategory struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Slug      string `json:"slug"`
	TermCount int    `json:"termCount"`
}

// glossaryCategories reads glossary/categories.
func (ps *parser) glossaryCategories() {
	for _, d := range ps.docs(dirGlossaryCategories) {
		c := GlossaryCategory{Name: d.str("name", true), Slug: d.slug("slug", true)}
		if ps.ok(d.finish(false)) && ps.claim("glossary category", d, c.Slug) {
			c.ID = newID("glossary-category", c.Slug)
			ps.glossCat[c.Slug] = len(ps.pack.glossaryCats)
			ps.pack.glossaryCats = append(ps.pack.glossaryCats, c)
		}
	}
}

// terms reads the glossary terms and returns their documents, in the order
// of pack.terms, for [parser.relatedTerms].
func (ps *parser) terms() []*document {
	var kept []*document
	for _, d := range ps.docs(dirTerms) {
		t := TermDetail{
			Term:         Term{Name: d.str("term", true), Slug: d.slug("slug", true), Definition: unwrap(d.body)},
			RelatedTerms: d.list("related", false),
		}
		cat := d.slug("category", true)
		if !ps.ok(d.finish(true)) {
			continue
		}
		i, known := ps.glossCat[cat]
		switch {
		case !known:
			ps.ok(d.errorf(d.line("category"), "unknown glossary category %q (no file in %s declares it)", cat, dirGlossaryCategories))
		case slices.Contains(t.RelatedTerms, t.Slug):
			ps.ok(d.errorf(d.line("related"), "term %q lists itself as related", t.Slug))
		case ps.claim("term", d, t.Slug):
			t.ID = newID("term", t.Slug)
			t.CategoryID = ps.pack.glossaryCats[i].ID
			ps.pack.glossaryCats[i].TermCount++
			ps.pack.terms = append(ps.pack.terms, t)
			kept = append(kept, d)
		}
	}
	return kept
}

// relatedTerms reports related slugs that name no term, at the line of the
// "related" key of the term that lists them.
func (ps *parser) relatedTerms(docs []*document) {
	for i, d := range docs {
		for _, r := range ps.pack.terms[i].RelatedTerms {
			if _, exists := ps.slugs["term"][r]; !exists {
				ps.ok(d.errorf(d.line("related"), "related term %q does not exist", r))
			}
		}
	}
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
