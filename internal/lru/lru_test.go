package lru

import "testing"

func TestCache(t *testing.T) {
	c := New(100)
	c.Put("a", 1, "A", 40)
	c.Put("b", 1, "B", 40)
	if v, ok := c.Get("a", 1); !ok || v != "A" {
		t.Fatal("a missing")
	}
	c.Put("c", 1, "C", 40) // evicts b, the least recently used
	if _, ok := c.Get("b", 1); ok {
		t.Error("b survived past the bound")
	}
	if _, ok := c.Get("a", 2); ok {
		t.Error("a served for another price version")
	}
	if _, ok := c.Get("a", 1); ok {
		t.Error("a's stale entry was not dropped on the version miss")
	}
	c.Put("huge", 1, "H", 101)
	if _, ok := c.Get("huge", 1); ok || c.used > c.max {
		t.Errorf("an entry larger than the cache was kept (used %d)", c.used)
	}
	if c.Len() != 1 || c.used != 40 {
		t.Errorf("len %d used %d, want 1 and 40", c.Len(), c.used)
	}
}

func TestHolds(t *testing.T) {
	c := New(100)
	if !c.Holds(100) || c.Holds(101) {
		t.Errorf("Holds(100), Holds(101) = %v, %v; want true, false", c.Holds(100), c.Holds(101))
	}
}
