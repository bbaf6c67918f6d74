package api

import (
	"net/http/httptest"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// BenchmarkGetStatus is GET /api/status through the whole handler
// (middleware, router, JSON) while a folder plays; "restrictions" adds the
// parental rules' part as the box always shows it.
func BenchmarkGetStatus(b *testing.B) {
	for _, bc := range []struct {
		name  string
		restr func() rules.Restrictions
	}{
		{"plain", nil},
		{"restrictions", func() rules.Restrictions { return rules.Restrictions{Clock: "set", LockedFolders: 1} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			t := &testing.T{}
			box := newBox(t, func(d *Deps) { d.Views.Restrictions = bc.restr })
			box.t = t
			box.call("POST", "/api/command", `{"action":"folder","folder_id":"`+box.folderID("Folge A")+`"}`)
			req := httptest.NewRequest("GET", "/api/status", nil)
			req.Host = "box:8090"
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				box.srv.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatal(rec.Code)
				}
			}
		})
	}
}
