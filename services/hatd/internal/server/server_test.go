package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storybox/storybox/services/hatd/internal/sim"
	"github.com/storybox/storybox/services/hatd/internal/status"
)

func TestRoutes(t *testing.T) {
	board := sim.New(sim.Options{})
	h := NewHandler(Deps{Status: func() status.Status { return status.Status{Profile: "p"} }, Sim: board})
	for _, tc := range []struct {
		method, path, ctype, body string
		code                      int
		want                      string
	}{
		{"GET", "/status", "", "", 200, `"profile":"p"`},
		{"GET", "/sim", "", "", 200, `"resting_mv":79`},
		{"POST", "/sim", "application/json", `{"load_ma":900}`, 200, `"load_ma":900`},
		{"POST", "/sim", "text/plain", `{"load_ma":900}`, 415, `{"error":"Content-Type must be application/json","kind":"unsupported"}`},
		{"POST", "/sim", "application/json", `{"volts":1}`, 400, `"kind":"invalid"`},
		{"POST", "/sim", "application/json", `{"speed":0}`, 400, `{"error":"sim: speed must be above 0 and at most 1000000","kind":"invalid"}`},
		{"POST", "/sim", "application/json", `{} {}`, 400, `expected one JSON object`},
		{"POST", "/status", "", "", 405, `{"error":"method POST is not allowed on /status","kind":"invalid"}`},
		{"GET", "/nothing", "", "", 404, `{"error":"no such endpoint: /nothing","kind":"not found"}`},
		{"POST", "/sim", "application/json", `{"load_ma":` + strings.Repeat(" ", 64<<10) + `1}`, 413, `{"error":"body is larger than 65536 bytes","kind":"too large"}`},
	} {
		req := httptest.NewRequest(tc.method, tc.path, strings.NewReader(tc.body))
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.code || !strings.Contains(rec.Body.String(), tc.want) || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s %s %s: %d %s", tc.method, tc.path, tc.body, rec.Code, rec.Body)
		}
	}
	if board.State().LoadMA != 900 {
		t.Error("control not applied")
	}
	// Without the simulation there is no /sim.
	h = NewHandler(Deps{Status: func() status.Status { return status.Status{} }})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/sim", nil))
	if rec.Code != http.StatusNotFound || rec.Header().Get("Content-Type") != "application/json" {
		t.Errorf("/sim without -sim: %d", rec.Code)
	}
}
