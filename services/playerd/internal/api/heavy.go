package api

import (
	"net/http"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/gate"
)

// heavy bounds the requests that each hold much memory or the disk for
// long, so that many at once cannot take the box's memory; beyond a bound
// a request is answered 429 with Retry-After. Screenshots are bounded by
// the display itself, for both APIs.
//
//   - covers: a cover is read whole into memory (up to 16 MB from a file,
//     usually a few hundred KB). Four at once; a browser asks for up to 6
//     at a time, so up to 16 more wait their turn for a moment instead of
//     showing a broken image.
//   - backups: one at a time; with the media it streams the whole library.
//   - uploads (files, a folder's cover, a restore): two at a time; a cover
//     and a restore's archive are held in memory (8 and 16 MB at most).
type heavy struct {
	covers, backups, uploads *gate.Gate
}

func newHeavy() heavy {
	return heavy{
		covers:  gate.New("cover requests", gate.Limits{Run: 4, Wait: 16, Patience: 5 * time.Second}),
		backups: gate.New("backups", gate.Limits{Run: 1, RetryAfter: 5 * time.Second}),
		uploads: gate.New("uploads", gate.Limits{Run: 2, RetryAfter: 5 * time.Second}),
	}
}

// enter takes a turn at g for r; when there is none it answers the
// refusal (429 with Retry-After) and returns false.
func (h *handler) enter(w http.ResponseWriter, r *http.Request, g *gate.Gate) (leave func(), ok bool) {
	leave, err := g.Enter(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return nil, false
	}
	return leave, true
}
