package speech

import (
	"context"
	"fmt"
	"testing"
)

// Time from a queued announcement to a clip ready for the player, on a cache
// miss (the program renders; then decode, resample, store) and a hit.
// `make bench-speech` runs them with the built program.

func benchService(b *testing.B) *Service {
	c, err := OpenCache(b.TempDir(), 64<<20)
	if err != nil {
		b.Fatal(err)
	}
	return NewService(Config{Voice: realVoice(b), Cache: c})
}

func BenchmarkFirstRender(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		r, _ := s.request(fmt.Sprintf("Abendessen ist fertig, Nummer %d!", i), "")
		if _, cached, err := s.prepare(ctx, r); err != nil || cached {
			b.Fatal(err, cached)
		}
	}
}

func BenchmarkCachedAnswer(b *testing.B) {
	s := benchService(b)
	ctx := context.Background()
	r, _ := s.request("Abendessen ist fertig!", "")
	if _, _, err := s.prepare(ctx, r); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, cached, err := s.prepare(ctx, r); err != nil || !cached {
			b.Fatal(err, cached)
		}
	}
}
