// Package adminui is the parents' admin page: static files embedded in the
// binary, so the page works on a box without internet. It talks to the
// box only through the public API under /api/, from the same origin.
package adminui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
)

//go:embed static
var files embed.FS

// Prefix is where the page is served.
const Prefix = "/admin/"

// CSP is the page's Content-Security-Policy: scripts, styles and API calls
// only from the box itself, no inline script or style, no framing. Covers
// are shown from blob: URLs while an upload is previewed.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; object-src 'none'; frame-ancestors 'none'"

// asset is one file of the page, prepared once: its type, a validator,
// and a gzip copy. The page is text that shrinks to about a quarter, and
// a phone on the edge of the Wi-Fi feels every kilobyte.
type asset struct {
	body, gz       []byte
	ctype          string
	etag, etagGzip string // one per representation, as HTTP wants
}

// types are the page's own, fixed: a machine's mime.types (read by
// package mime) could name JavaScript otherwise, and a browser runs a
// module only with a JavaScript type.
var types = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
}

func load() map[string]*asset {
	out := map[string]*asset{}
	err := fs.WalkDir(files, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := files.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		tag := hex.EncodeToString(sum[:12])
		a := &asset{body: body, ctype: types[path.Ext(p)], etag: `"` + tag + `"`, etagGzip: `"` + tag + `-gz"`}
		if a.ctype == "" {
			a.ctype = "application/octet-stream"
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(body)
		zw.Close()
		if buf.Len() < len(body) {
			a.gz = buf.Bytes()
		}
		out[strings.TrimPrefix(p, "static/")] = a
		return nil
	})
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	return out
}

// Handler serves the page's files below Prefix: index.html for the
// prefix itself, notFound's answer (the API's JSON 404) for any other
// name, no directory listings. A reload
// asks again (no-cache) and gets 304 while the file is the same, so a
// box updated in the meantime serves its new page at once.
func Handler(notFound http.HandlerFunc) http.Handler {
	assets := load()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" {
			name = "index.html"
		}
		a := assets[name]
		if a == nil || !strings.HasPrefix(r.URL.Path, Prefix) {
			notFound(w, r)
			return
		}
		body, etag := a.body, a.etag
		if a.gz != nil && acceptsGzip(r.Header.Get("Accept-Encoding")) {
			body, etag = a.gz, a.etagGzip
			h.Set("Content-Encoding", "gzip")
		}
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", etag)
		h.Set("Vary", "Accept-Encoding")
		h.Set("Content-Type", a.ctype)
		if strings.Contains(r.Header.Get("If-None-Match"), etag) {
			h.Del("Content-Encoding")
			w.WriteHeader(http.StatusNotModified)
			return
		}
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			w.Write(body)
		}
	})
}

// acceptsGzip reads Accept-Encoding: gzip listed without q=0.
func acceptsGzip(ae string) bool {
	for _, part := range strings.Split(ae, ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
