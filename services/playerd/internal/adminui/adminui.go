// Package adminui is the parents' admin page: static files embedded in the
// binary, so the page works on a box without internet. It talks to the
// box only through the public API under /api/, from the same origin.
package adminui

import (
	"embed"
	"io/fs"
	"net/http"
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

// Handler serves the page's files below Prefix.
func Handler() http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	fsrv := http.StripPrefix(Prefix, http.FileServer(http.FS(sub)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", CSP)
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		fsrv.ServeHTTP(w, r)
	})
}
