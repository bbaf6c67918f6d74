package household

import (
	"fmt"
	"testing"
	"time"
)

// A box at the cards' limit: what a reconcile after every Syncthing change
// and the read of the cards at start cost.
func benchBox(b *testing.B, n int) *Store {
	b.Helper()
	s, err := Open(b.TempDir(), "aaaa", func() time.Time { return t0 })
	if err != nil {
		b.Fatal(err)
	}
	for i := range n {
		if _, err := s.Put(Cards, fmt.Sprintf("%08d", i), value{Action: "folder", Name: "Bobo, blue figure"}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkReconcile1000(b *testing.B) {
	s := benchBox(b, 1000)
	for b.Loop() {
		if _, err := s.Reconcile(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkList1000(b *testing.B) {
	s := benchBox(b, 1000)
	for b.Loop() {
		if _, err := s.List(Cards); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPut(b *testing.B) {
	s := benchBox(b, 0)
	i := 0
	for b.Loop() {
		i++
		if _, err := s.Put(Cards, "1", value{Action: fmt.Sprint(i)}); err != nil {
			b.Fatal(err)
		}
	}
}
