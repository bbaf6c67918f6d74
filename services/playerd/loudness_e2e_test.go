package main

import (
	"github.com/storybox/storybox/services/playerd/internal/library"
	"net/http"
	"testing"
	"time"
)

// The library's loudness is measured in the background after the first
// scan, and an upload within seconds of its arrival: GET
// /api/admin/loudness counts "measured N of M".
func TestLoudnessMeasured(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1, 2}, "Musik": {1}})
	base, stop := startBox(t, media, t.TempDir())
	defer stop()
	waitScanned(t, base)
	c := client(t, base)
	measured := func(n int) func() bool {
		return func() bool {
			b := c.ok("GET", "/api/admin/loudness", "").body
			return b["measured"] == float64(n) && b["total"] == float64(n) && b["failed"] == float64(0)
		}
	}
	waitUntil(t, "3 of 3 measured", 60*time.Second, measured(3))

	ctype, body := multipartOf(t, part{"file", "Kapitel 3.wav", tone(1)})
	if r := c.send("POST", "/api/admin/library/folders/"+library.ID("Hoerspiele/Folge A")+"/files", body, "Content-Type", ctype); r.code != http.StatusCreated {
		t.Fatalf("upload: %d %s", r.code, r.raw)
	}
	waitUntil(t, "the upload measured", 20*time.Second, measured(4))
}
