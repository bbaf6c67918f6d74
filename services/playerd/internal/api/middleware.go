package api

import (
	"net/http"
	"net/url"
	"strings"
)

// securityHeaders sets what every response carries, as the real box does.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}

// sameOrigin refuses writes that a browser sends on behalf of another web
// site (spec, Authentication rule 2). Clients that send no Origin, such as
// curl or home automation, are not browsers and pass.
func (h *handler) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
			h.writeError(w, r, http.StatusForbidden, "cross-site request denied")
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originMatches(origin, r) {
			h.writeError(w, r, http.StatusForbidden, "origin denied")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// originMatches compares scheme and host (with port) of Origin with the
// request's own.
func originMatches(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // includes the opaque "null" origin
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(u.Host, r.Host)
}
