package knowledge

import (
	"cmp"
	"slices"
	"strings"
)

// Status is the state of a roadmap item.
type Status string

// The roadmap statuses of the spec.
const (
	StatusPlanned    Status = "planned"
	StatusInProgress Status = "in_progress"
	StatusReleased   Status = "released"
)

// RoadmapItem is an entry of the public roadmap. Exactly one of
// EstimatedRelease ("YYYY-Qn", unreleased items) and ReleasedAt (released
// items) is set; the other is left out of the JSON.
//
// Routes and Packages name what delivers the item, so that a test can
// check that a released item really is served; they are not part of the
// API's JSON.
type RoadmapItem struct {
	ID               string    `json:"id"`
	Title            string    `json:"title"`
	Description      string    `json:"description"`
	Status           Status    `json:"status"`
	Category         string    `json:"category"`
	EstimatedRelease string    `json:"estimatedRelease,omitempty"`
	ReleasedAt       Timestamp `json:"releasedAt,omitzero"`
	Votes            int       `json:"votes"`

	// Routes are HTTP routes that serve the item, each "METHOD /path",
	// optionally with a query, and with path parameters written as in the
	// router ("GET /api/v1/market-data/assets/:id"). Empty when none.
	Routes []string `json:"-"`
	// Packages are Go packages of this module that provide the item, as
	// paths from the module root ("indicators", "indicators/formula"), for
	// what the library offers beyond the HTTP API. Empty when none.
	Packages []string `json:"-"`
}

// roadmap reads roadmap/ and checks that the status and the date keys agree.
func (ps *parser) roadmap() {
	for _, d := range ps.docs(dirRoadmap) {
		item := RoadmapItem{
			Title:       d.str("title", true),
			Status:      Status(d.str("status", true)),
			Category:    d.str("category", true),
			Votes:       d.integer("votes", true),
			Description: unwrap(d.body),
			Routes:      d.listOf("routes", false, routePattern, `a route "METHOD /path" (GET, POST, PUT, PATCH or DELETE; no blanks or commas)`),
			Packages:    d.listOf("packages", false, packagePattern, "a package path from the module root such as indicators/formula"),
		}
		slug := d.slug("slug", true)
		switch item.Status {
		case StatusPlanned, StatusInProgress, StatusReleased, "": // "" is reported as missing
		default:
			d.fail(d.line("status"), "status must be planned, in_progress or released, got %q", item.Status)
		}
		if item.Category != "" && !roadmapCatPattern.MatchString(item.Category) {
			d.fail(d.line("category"), "category %q must be lowercase words joined by underscores", item.Category)
		}
		if item.Status == StatusReleased {
			item.ReleasedAt = d.timestamp("releasedAt", true)
			if _, has := d.fields["estimatedRelease"]; has {
				d.fail(d.line("estimatedRelease"), "a released item has releasedAt, not estimatedRelease")
			}
		} else {
			item.EstimatedRelease = d.str("estimatedRelease", true)
			if item.EstimatedRelease != "" && !quarterPattern.MatchString(item.EstimatedRelease) {
				d.fail(d.line("estimatedRelease"), "estimatedRelease must be YYYY-Qn with n in 1..4, got %q", item.EstimatedRelease)
			}
			if _, has := d.fields["releasedAt"]; has {
				d.fail(d.line("releasedAt"), "only a released item has releasedAt")
			}
		}
		if ps.ok(d.finish(true)) && ps.claim("roadmap", d, slug) {
			item.ID = newID("roadmap", slug)
			ps.pack.roadmap = append(ps.pack.roadmap, item)
		}
	}
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

// Roadmap returns every roadmap item: in progress first, then planned (both
// by estimated quarter, then most votes), then released (newest first).
func (p *Pack) Roadmap() []RoadmapItem {
	out := slices.Clone(p.roadmap)
	for i := range out {
		out[i].Routes = slices.Clone(out[i].Routes)
		out[i].Packages = slices.Clone(out[i].Packages)
	}
	return out
}
