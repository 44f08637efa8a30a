package object

import (
	"fmt"
	"testing"
)

func TestTableAddLookupRelease(t *testing.T) {
	tb := NewTable()
	h := Handle{Realm: "client:a", Generation: 1, ID: "7"}
	id, ok := tb.Add(h, "console")
	if !ok || !Owns(id) {
		t.Fatalf("Add = %q, %v; want an owned id", id, ok)
	}
	if Owns("-4511.1.3") {
		t.Fatal("a V8 objectId must not look table-owned")
	}
	if got, ok := tb.Lookup(id); !ok || got != h {
		t.Fatalf("Lookup = %v, %v", got, ok)
	}
	if got, ok := tb.Release(id); !ok || got != h {
		t.Fatalf("Release = %v, %v", got, ok)
	}
	if _, ok := tb.Lookup(id); ok {
		t.Fatal("released id still found")
	}
	if _, ok := tb.Release(id); ok {
		t.Fatal("double release succeeded")
	}
	if tb.Len() != 0 {
		t.Fatalf("Len = %d", tb.Len())
	}
}

func TestTableGroupsAndRealms(t *testing.T) {
	tb := NewTable()
	var ids []string
	for i := range 6 {
		group := "console"
		if i%2 == 1 {
			group = "completion"
		}
		id, _ := tb.Add(Handle{Realm: "client:a", Generation: uint64(1 + i/3), ID: fmt.Sprint(i)}, group)
		ids = append(ids, id)
	}
	if got := tb.ReleaseGroup("completion"); len(got) != 3 {
		t.Fatalf("ReleaseGroup returned %d handles, want 3", len(got))
	}
	if tb.Len() != 3 || tb.Held("client:a") != 3 {
		t.Fatalf("Len = %d, Held = %d after group release, want 3", tb.Len(), tb.Held("client:a"))
	}
	// Generation 1 holds ids 0 and 2 (1 was in the released group).
	if n := tb.DropRealm("client:a", 1); n != 2 {
		t.Fatalf("DropRealm dropped %d, want 2", n)
	}
	if _, ok := tb.Lookup(ids[4]); !ok {
		t.Fatal("generation 2 object was dropped")
	}
	if got := tb.ReleaseGroup("console"); len(got) != 1 {
		t.Fatalf("console group = %d handles, want 1", len(got))
	}
	if tb.Len() != 0 {
		t.Fatalf("Len = %d, want 0", tb.Len())
	}
}

func TestTableBound(t *testing.T) {
	tb := NewTable()
	add := func(realm string, n int) {
		t.Helper()
		for i := range n {
			if _, ok := tb.Add(Handle{Realm: realm, ID: fmt.Sprint(i)}, ""); !ok {
				t.Fatalf("Add %d of %s refused before its bound (table %d, realm %d)", i, realm, tb.Len(), tb.Held(realm))
			}
		}
	}
	// One realm fills its share, no more; the others are not affected.
	add("a", MaxRealmObjects)
	if _, ok := tb.Add(Handle{Realm: "a", ID: "x"}, ""); ok {
		t.Fatal("Add past MaxRealmObjects succeeded")
	}
	if fe := tb.Full("a"); fe == nil || !fe.Share || fe.Held != MaxRealmObjects {
		t.Fatalf("Full(a) = %+v, want its share", fe)
	}
	if fe := tb.Full("b"); fe != nil {
		t.Fatalf("Full(b) = %v with the table a quarter full", fe)
	}
	// Four realms at their share fill the table; a fifth still gets its
	// reserve, then is refused with the table full.
	add("b", MaxRealmObjects)
	add("c", MaxRealmObjects)
	add("d", MaxRealmObjects)
	if tb.Len() != MaxObjects {
		t.Fatalf("Len = %d, want %d", tb.Len(), MaxObjects)
	}
	add("e", RealmReserve)
	if _, ok := tb.Add(Handle{Realm: "e", ID: "x"}, ""); ok {
		t.Fatal("Add past the reserve of a full table succeeded")
	}
	fe := tb.Full("e")
	if fe == nil || fe.Share || fe.Held != RealmReserve || fe.Total != MaxObjects+RealmReserve || fe.Top != "a" || fe.TopHeld != MaxRealmObjects {
		t.Fatalf("Full(e) = %+v", fe)
	}
	// Releasing gives the share back; Drain forgets every count.
	for _, r := range []string{"a", "b", "c", "d", "e"} {
		tb.DropRealm(r, 0)
	}
	if tb.Held("a") != 0 || tb.Len() != 0 {
		t.Fatalf("after releasing everything: Held(a) = %d, Len = %d", tb.Held("a"), tb.Len())
	}
	add("a", 3)
	tb.Drain()
	if tb.Held("a") != 0 {
		t.Fatalf("Held(a) = %d after Drain", tb.Held("a"))
	}
}

func TestTableDrain(t *testing.T) {
	tb := NewTable()
	for i := range 5 {
		group := ""
		if i%2 == 0 {
			group = "console"
		}
		tb.Add(Handle{Realm: "client:a", Generation: 1, ID: fmt.Sprint(i)}, group)
	}
	got := tb.Drain()
	if len(got) != 5 || tb.Len() != 0 {
		t.Fatalf("Drain = %d entries, Len after = %d; want 5 and 0", len(got), tb.Len())
	}
	grouped := 0
	for _, e := range got {
		if e.Group == "console" {
			grouped++
		}
	}
	if grouped != 3 {
		t.Fatalf("Drain kept %d console entries, want 3", grouped)
	}
	if h := tb.ReleaseGroup("console"); len(h) != 0 {
		t.Fatalf("group survived Drain: %v", h)
	}
}
