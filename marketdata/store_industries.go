package marketdata

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/uptrace/bun"

	"github.com/tradekit/tradekit"
)

// ---- industries ----

// industryTree is every industry node with its subtree's asset count.
type industryTree struct {
	nodes    []Industry          // sector first, then groups, then industries; by name within a level
	byID     map[uuid.UUID]int   // index into nodes
	children map[uuid.UUID][]int // direct children
	counts   map[uuid.UUID]int   // assets attached directly to a node
}

func levelRank(l Level) int {
	switch l {
	case Sector:
		return 0
	case IndustryGroup:
		return 1
	}
	return 2
}

// tree loads the whole industry tree (it is small: a few hundred nodes)
// and counts the assets below every node.
func (s *Store) tree(ctx context.Context) (*industryTree, error) {
	t := &industryTree{byID: map[uuid.UUID]int{}, children: map[uuid.UUID][]int{}, counts: map[uuid.UUID]int{}}
	if err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries").Scan(ctx, &t.nodes); err != nil {
		return nil, fmt.Errorf("marketdata: industries: %w", err)
	}
	var counts []struct {
		ID uuid.UUID `bun:"industry_id"`
		N  int       `bun:"n"`
	}
	err := s.db.NewRaw("SELECT industry_id, COUNT(*) AS n FROM assets WHERE industry_id IS NOT NULL GROUP BY industry_id").Scan(ctx, &counts)
	if err != nil {
		return nil, fmt.Errorf("marketdata: industry asset counts: %w", err)
	}
	for _, c := range counts {
		t.counts[c.ID] = c.N
	}
	slices.SortFunc(t.nodes, func(a, b Industry) int {
		if r := levelRank(a.Level) - levelRank(b.Level); r != 0 {
			return r
		}
		return strings.Compare(a.Name, b.Name)
	})
	for i, n := range t.nodes {
		t.byID[n.ID] = i
		if n.ParentID != nil {
			t.children[*n.ParentID] = append(t.children[*n.ParentID], i)
		}
	}
	// Bottom-up: industries, then groups, then sectors.
	for i := len(t.nodes) - 1; i >= 0; i-- {
		n := &t.nodes[i]
		n.AssetCount += t.counts[n.ID]
		for _, c := range t.children[n.ID] {
			n.AssetCount += t.nodes[c].AssetCount
		}
	}
	return t, nil
}

// subtree returns the ids of the node at i and all nodes below it.
func (t *industryTree) subtree(i int) []uuid.UUID {
	ids := []uuid.UUID{t.nodes[i].ID}
	for _, c := range t.children[t.nodes[i].ID] {
		ids = append(ids, t.subtree(c)...)
	}
	return ids
}

func (t *industryTree) node(id uuid.UUID) (int, error) {
	i, ok := t.byID[id]
	if !ok {
		return 0, fmt.Errorf("marketdata: %w", tradekit.Errorf(tradekit.ErrNotFound, "industry %s not found", id))
	}
	return i, nil
}

// Industries returns the industry nodes of the given level ("" for all),
// sectors first, then industry groups, then industries, by name within a
// level, each with the count of assets below it. The error wraps
// [tradekit.ErrInvalid] for an unknown level.
func (s *Store) Industries(ctx context.Context, level Level) ([]Industry, error) {
	if level != "" && !level.IsValid() {
		return nil, fmt.Errorf("marketdata: industry level %q: %w", level, tradekit.ErrInvalid)
	}
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	out := []Industry{}
	for _, n := range t.nodes {
		if level == "" || n.Level == level {
			out = append(out, n)
		}
	}
	return out, nil
}

// Industry returns the industry node with the given id and its asset
// count. The error wraps [tradekit.ErrNotFound] when there is none.
func (s *Store) Industry(ctx context.Context, id uuid.UUID) (Industry, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return Industry{}, err
	}
	i, err := t.node(id)
	if err != nil {
		return Industry{}, err
	}
	return t.nodes[i], nil
}

// IndustryChildren returns the direct children of the node with the given
// id, by name. The error wraps [tradekit.ErrNotFound] when there is no
// such node.
func (s *Store) IndustryChildren(ctx context.Context, id uuid.UUID) ([]Industry, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := t.node(id); err != nil {
		return nil, err
	}
	out := []Industry{}
	for _, c := range t.children[id] {
		out = append(out, t.nodes[c])
	}
	return out, nil
}

// IndustryAssets returns the assets at the node with the given id or
// anywhere below it, by symbol. The error wraps [tradekit.ErrNotFound]
// when there is no such node.
func (s *Store) IndustryAssets(ctx context.Context, id uuid.UUID) ([]Asset, error) {
	t, err := s.tree(ctx)
	if err != nil {
		return nil, err
	}
	i, err := t.node(id)
	if err != nil {
		return nil, err
	}
	out := []Asset{}
	err = s.db.NewRaw("SELECT "+assetColumns+" FROM assets WHERE industry_id IN (?) ORDER BY symbol",
		bun.In(t.subtree(i))).Scan(ctx, &out)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("marketdata: assets of industry %s: %w", id, err)
	}
	return out, nil
}

func (s *Store) industryRow(ctx context.Context, id uuid.UUID) (Industry, error) {
	var n Industry
	if err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries WHERE id = ?", id).Scan(ctx, &n); err != nil {
		return Industry{}, notFound(err, "industry %s", id)
	}
	return n, nil
}

// IndustryByName returns the node of the given level and name (compared
// case-insensitively). The error wraps [tradekit.ErrNotFound] when there
// is none.
func (s *Store) IndustryByName(ctx context.Context, level Level, name string) (Industry, error) {
	var n Industry
	err := s.db.NewRaw("SELECT id, name, level, parent_id FROM industries WHERE level = ? AND LOWER(name) = ?",
		string(level), strings.ToLower(strings.TrimSpace(name))).Scan(ctx, &n)
	if err != nil {
		return Industry{}, notFound(err, "%s %s", level, tradekit.Quote(name))
	}
	return n, nil
}

// SaveIndustry inserts n, or updates the node with its level and name,
// and sets n.ID to the stored id (a new node without an id gets
// [IndustryID]). A sector has no parent; an industry group's parent is a
// sector and an industry's an industry group: anything else is an error
// wrapping [tradekit.ErrInvalid].
func (s *Store) SaveIndustry(ctx context.Context, n *Industry) error {
	n.Name = strings.TrimSpace(n.Name)
	if n.Name == "" || !n.Level.IsValid() {
		return fmt.Errorf("marketdata: industry %q: a name and a level (sector, industry_group, industry) are required: %w",
			n.Name, tradekit.ErrInvalid)
	}
	if want := n.Level.parent(); want == "" {
		if n.ParentID != nil {
			return fmt.Errorf("marketdata: sector %q cannot have a parent: %w", n.Name, tradekit.ErrInvalid)
		}
	} else {
		if n.ParentID == nil {
			return fmt.Errorf("marketdata: %s %q needs a parent %s: %w", n.Level, n.Name, want, tradekit.ErrInvalid)
		}
		p, err := s.industryRow(ctx, *n.ParentID)
		if err != nil || p.Level != want {
			return fmt.Errorf("marketdata: %s %q: parent %s is not a %s: %w", n.Level, n.Name, *n.ParentID, want, tradekit.ErrInvalid)
		}
	}
	if n.ID == uuid.Nil {
		n.ID = IndustryID(n.Level, n.Name)
	}
	err := s.db.NewRaw(`INSERT INTO industries (id, name, level, parent_id) VALUES (?, ?, ?, ?)
		ON CONFLICT (level, name) DO UPDATE SET parent_id = excluded.parent_id RETURNING id`,
		n.ID, n.Name, string(n.Level), n.ParentID).Scan(ctx, &n.ID)
	if err != nil {
		return fmt.Errorf("marketdata: save industry %q: %w", n.Name, err)
	}
	return nil
}
