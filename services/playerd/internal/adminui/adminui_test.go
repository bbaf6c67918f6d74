package adminui

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The page's files are served with types a browser runs as modules, and
// with a policy that allows no inline script or style and no framing.
func TestServesPageWithStrictPolicy(t *testing.T) {
	h := Handler()
	for _, c := range []struct{ path, ctype, body string }{
		{"/admin/", "text/html", `<script type="module" src="js/app.js">`},
		{"/admin/app.css", "text/css", "[hidden]"},
		{"/admin/js/app.js", "text/javascript", "import"},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, c.path, nil))
		body, _ := io.ReadAll(rec.Body)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.ctype) || !strings.Contains(string(body), c.body) {
			t.Errorf("%s: %d %q, body has %q: %v", c.path, rec.Code, rec.Header().Get("Content-Type"), c.body, strings.Contains(string(body), c.body))
		}
		csp := rec.Header().Get("Content-Security-Policy")
		for _, want := range []string{"script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "default-src 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: CSP %q lacks %q", c.path, csp, want)
			}
		}
		if strings.Contains(csp, "unsafe") {
			t.Errorf("%s: CSP %q allows unsafe sources", c.path, csp)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/admin/nothing.js", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("unknown file: %d", rec.Code)
	}
}
