package api

import (
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// securityHeaders sets what every response carries, as the real box does.
// The values are shared by all responses instead of allocated for each:
// header values are replaced by Set and copied by Add, never written to.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["X-Content-Type-Options"] = nosniff
		h["Content-Security-Policy"] = csp
		h["Cache-Control"] = noStore
		next.ServeHTTP(w, r)
	})
}

var (
	nosniff = []string{"nosniff"}
	csp     = []string{"default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"}
	noStore = []string{"no-store"}
)

// sameOrigin refuses writes that a browser sends on behalf of another web
// site (spec, Authentication rule 2). Clients that send no Origin, such as
// curl or home automation, are not browsers and pass.
func (h *handler) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		if msg := crossSite(r); msg != "" {
			h.fail(w, r, fault.New(fault.Forbidden, "%s", msg))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossSite tells why a browser sent r on behalf of another web site, or
// returns "" when it did not.
func crossSite(r *http.Request) string {
	if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
		return "cross-site request denied"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !originMatches(origin, r) {
		return "origin denied"
	}
	return ""
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

// checkHost refuses requests whose Host header does not name this box
// (DNS rebinding: a web page that points its own name at the box's address
// would otherwise read and steer it from a child's browser). Reads are
// refused too, before anything runs.
func (h *handler) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Hosts.Allowed(r.Host) {
			h.fail(w, r, fault.New(fault.Forbidden, "host name not allowed; use the box's IP address or name"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// identify turns the request into an auth.Caller: where it comes from, and
// whether it carries a live administrator session.
func (h *handler) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := auth.CallerAt(r.RemoteAddr)
		for _, ck := range r.Cookies() {
			if ck.Name == auth.CookieName && h.Auth.Valid(ck.Value) {
				c.Admin = true
				break
			}
		}
		next.ServeHTTP(w, r.WithContext(auth.WithCaller(r.Context(), c)))
	})
}

// guard applies the spec's protection rules by path prefix, so every route
// under a protected prefix is covered, present and future:
//   - /api/admin/...: open while no password is set; once one is, only
//     /api/admin/auth and /api/admin/login are open without a session.
//   - /api/connectivity/...: open from the box itself (loopback); from
//     the network it needs a session, and there is none to have while no
//     password is set (409).
//   - everything else (player, status, library) is open to the home network.
func (h *handler) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := cleanPath(r.URL.Path)
		c := auth.CallerFrom(r.Context())
		switch {
		case under(p, "/api/admin"):
			if p != "/api/admin/auth" && p != "/api/admin/login" && !c.Admin && h.Auth.Protected() {
				h.fail(w, r, errLoginRequired)
				return
			}
		case under(p, "/api/connectivity"):
			if c.Via != auth.Loopback && !c.Admin {
				if !h.Auth.Protected() {
					h.fail(w, r, fault.New(fault.Conflict, "administrator password not set"))
				} else {
					h.fail(w, r, errLoginRequired)
				}
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

var errLoginRequired = fault.New(fault.Unauthorized, "admin authentication required")

// under reports whether p is prefix itself or below it.
func under(p, prefix string) bool {
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// cleanPath is the path the router matches (it redirects anything else),
// so the guard and the router always agree on where a request goes.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
