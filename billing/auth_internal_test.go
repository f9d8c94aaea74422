package billing

import (
	"fmt"
	"testing"
	"time"
)

// TestNegativeCacheEvicts checks that a flood of unknown keys pushes out
// only the oldest entries instead of wiping the cache.
func TestNegativeCacheEvicts(t *testing.T) {
	t.Parallel()
	c := negativeCache{until: make(map[string]time.Time)}
	until := time.Now().Add(time.Minute)
	for i := range maxNegative + 10 {
		c.add(fmt.Sprint(i), until)
	}
	if len(c.until) != maxNegative {
		t.Errorf("%d entries, want %d", len(c.until), maxNegative)
	}
	for _, k := range []string{"0", "9"} {
		if _, ok := c.until[k]; ok {
			t.Errorf("%s, among the 10 oldest, is still cached", k)
		}
	}
	for _, k := range []string{"10", fmt.Sprint(maxNegative + 9)} {
		if _, ok := c.until[k]; !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	// Adding a cached hash again renews it without taking a second slot.
	c.add("10", until.Add(time.Hour))
	c.add("new", until)
	if _, ok := c.until["10"]; ok {
		t.Error(`"10", now the oldest slot, survived the next addition`)
	}
	if len(c.until) != maxNegative || len(c.order) != maxNegative {
		t.Errorf("%d entries in %d slots", len(c.until), len(c.order))
	}
}

// TestFailureCounts checks the per-client count of failures: per UTC
// minute, and never shared: clients past maxClients are not counted, so
// that they cannot be throttled by the others' failures.
func TestFailureCounts(t *testing.T) {
	t.Parallel()
	f := failureCounts{n: make(map[string]int)}
	t0 := time.Date(2026, 11, 23, 10, 0, 30, 0, time.UTC)
	f.add("a", t0)
	f.add("a", t0.Add(20*time.Second))
	if got := f.count("a", t0.Add(29*time.Second)); got != 2 {
		t.Errorf("a in its minute: %d, want 2", got)
	}
	if got := f.count("a", t0.Add(30*time.Second)); got != 0 {
		t.Errorf("a in the next minute: %d, want 0", got)
	}
	for i := range maxClients + 5 {
		for range 3 {
			f.add(fmt.Sprint("c", i), t0)
		}
	}
	if len(f.n) > maxClients {
		t.Errorf("%d clients tracked, want at most %d", len(f.n), maxClients)
	}
	if got := f.count("someone new", t0); got != 0 {
		t.Errorf("a client past maxClients: count %d, want 0", got)
	}
	f.add("someone new", t0)
	if got := f.count("someone new", t0); got != 0 {
		t.Errorf("a client past maxClients, after a failure of its own: count %d, want 0", got)
	}
	if got := f.count("a", t0); got != 2 {
		t.Errorf("a, counted before the table filled: %d, want 2", got)
	}
}
