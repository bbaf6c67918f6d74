package adminui

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The page's files are served with types a browser runs as modules, and
// with a policy that allows no inline script or style and no framing.
func TestServesPageWithStrictPolicy(t *testing.T) {
	h := Handler(http.NotFound)
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

// Every module a module imports is embedded, so no section fails to load
// on the box.
func TestImportsAreEmbedded(t *testing.T) {
	mods, err := fs.Glob(files, "static/js/*.js")
	if err != nil || len(mods) == 0 {
		t.Fatalf("modules: %v %v", mods, err)
	}
	imp := regexp.MustCompile(`(?m)^import .* from '\./([\w-]+\.js)';$`)
	for _, m := range mods {
		src, err := fs.ReadFile(files, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, i := range imp.FindAllStringSubmatch(string(src), -1) {
			if _, err := fs.Stat(files, path.Join("static/js", i[1])); err != nil {
				t.Errorf("%s imports %s, which is not embedded", m, i[1])
			}
		}
	}
}

// Both languages have every string, and every fixed key the modules ask
// for is there (keys built at run time, `nav.${n}`, are the browser
// test's to see).
func TestBothLanguagesHaveEveryString(t *testing.T) {
	src, err := fs.ReadFile(files, "static/js/i18n.js")
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	de, en := strings.Index(s, "const de = {"), strings.Index(s, "const en = {")
	end := strings.Index(s, "const dicts")
	if de < 0 || en < de || end < en {
		t.Fatal("i18n.js: the dictionaries are not where this test looks")
	}
	key := regexp.MustCompile(`(?m)(?:^\s+|,\s)(?:'([a-z][\w.-]*)'|([a-z]+)): `)
	keys := func(part string) map[string]bool {
		m := map[string]bool{}
		for _, k := range key.FindAllStringSubmatch(part, -1) {
			m[k[1]+k[2]] = true
		}
		return m
	}
	deKeys, enKeys := keys(s[de:en]), keys(s[en:end])
	if len(deKeys) < 100 {
		t.Fatalf("found only %d German keys", len(deKeys))
	}
	for k := range deKeys {
		if !enKeys[k] {
			t.Errorf("%q has no English", k)
		}
	}
	for k := range enKeys {
		if !deKeys[k] {
			t.Errorf("%q has no German", k)
		}
	}
	mods, _ := fs.Glob(files, "static/js/*.js")
	use := regexp.MustCompile(`\bt\('([^']+)'`)
	for _, m := range mods {
		src, _ := fs.ReadFile(files, m)
		for _, u := range use.FindAllStringSubmatch(string(src), -1) {
			if !deKeys[u[1]] {
				t.Errorf("%s asks for %q, which is not in the dictionaries", m, u[1])
			}
		}
	}
}

// A browser that takes gzip gets the files compressed, the same bytes once
// unpacked; a reload with the validator gets 304 and no body; a
// directory is not listed.
func TestServesCompressedAndRevalidates(t *testing.T) {
	h := Handler(http.NotFound)
	get := func(path string, hdr ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	plain := get("/admin/js/i18n.js")
	zipped := get("/admin/js/i18n.js", "Accept-Encoding", "gzip, deflate, br")
	if zipped.Code != http.StatusOK || zipped.Header().Get("Content-Encoding") != "gzip" || zipped.Body.Len() >= plain.Body.Len()/2 {
		t.Fatalf("gzip: %d %q, %d bytes of %d", zipped.Code, zipped.Header().Get("Content-Encoding"), zipped.Body.Len(), plain.Body.Len())
	}
	zr, err := gzip.NewReader(zipped.Body)
	if err != nil {
		t.Fatal(err)
	}
	unpacked, err := io.ReadAll(zr)
	if err != nil || !bytes.Equal(unpacked, plain.Body.Bytes()) {
		t.Fatalf("the gzip copy differs from the file (%v)", err)
	}
	if get("/admin/js/i18n.js", "Accept-Encoding", "gzip;q=0").Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refuses it")
	}
	if plain.Header().Get("ETag") == zipped.Header().Get("ETag") || plain.Header().Get("ETag") == "" {
		t.Errorf("ETags %q and %q: one per representation", plain.Header().Get("ETag"), zipped.Header().Get("ETag"))
	}
	again := get("/admin/js/i18n.js", "Accept-Encoding", "gzip", "If-None-Match", zipped.Header().Get("ETag"))
	if again.Code != http.StatusNotModified || again.Body.Len() != 0 || again.Header().Get("Content-Security-Policy") != CSP {
		t.Errorf("revalidation: %d, %d bytes", again.Code, again.Body.Len())
	}
	if c := get("/admin/js/i18n.js", "If-None-Match", `"other"`).Code; c != http.StatusOK {
		t.Errorf("another validator: %d", c)
	}
	for _, p := range []string{"/admin/js/", "/admin/js", "/admin/static/app.css", "/admin/../adminui.go"} {
		if c := get(p).Code; c != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, c)
		}
	}
	req := httptest.NewRequest(http.MethodHead, "/admin/", nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK || rec.Body.Len() != 0 || rec.Header().Get("Content-Length") == "" {
		t.Errorf("HEAD: %d, %d bytes, length %q", rec.Code, rec.Body.Len(), rec.Header().Get("Content-Length"))
	}
}
