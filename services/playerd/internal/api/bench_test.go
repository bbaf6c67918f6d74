package api

import (
	"net/http/httptest"
	"testing"
)

// BenchmarkGetStatus is GET /api/status through the whole handler
// (middleware, router, JSON) while a folder plays.
func BenchmarkGetStatus(b *testing.B) {
	t := &testing.T{}
	box := newBox(t, nil)
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
}
