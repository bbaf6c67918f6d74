package hav1

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// securityHeaders: nothing here is for a browser to frame, sniff or cache.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
		h.Set("Cache-Control", "no-store")
		h.Set("Strict-Transport-Security", "max-age=31536000")
		next.ServeHTTP(w, r)
	})
}

// checkHost refuses names the box does not carry, as on :8090; the server
// certificate is issued for the same names.
func (h *handler) checkHost(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.Hosts.Allowed(r.Host) {
			h.fail(w, r, fault.New(fault.Forbidden, "host name not allowed; use the box's IP address or name"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// bearer is the token of an "Authorization: Bearer" header; "" when there
// is none. Tokens in the query string are never looked at.
func bearer(r *http.Request) string {
	v := r.Header.Get("Authorization")
	if len(v) < 7 || !strings.EqualFold(v[:7], "bearer ") {
		return ""
	}
	return strings.TrimSpace(v[7:])
}

// paired lets a request through with a valid token, any scope, and makes
// it a home-automation caller for everything downstream (the parental
// rules see who asks).
func (h *handler) paired(next func(http.ResponseWriter, *http.Request, pairing.Client)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c, err := h.Pairing.Authenticate(bearer(r))
		if err != nil {
			h.fail(w, r, err)
			return
		}
		caller := auth.CallerAt(r.RemoteAddr)
		caller.Via, caller.Client = auth.HomeAutomation, c.ID
		next(w, r.WithContext(auth.WithCaller(r.Context(), caller)), c)
	}
}

// need lets a request through with a valid token that has scope s.
func (h *handler) need(s pairing.Scope, next http.HandlerFunc) http.HandlerFunc {
	return h.paired(func(w http.ResponseWriter, r *http.Request, c pairing.Client) {
		if !c.Has(s) {
			h.fail(w, r, scopeError(s))
			return
		}
		next(w, r.WithContext(context.WithValue(r.Context(), clientKey{}, c)))
	})
}

type clientKey struct{}

func clientOf(ctx context.Context) pairing.Client {
	c, _ := ctx.Value(clientKey{}).(pairing.Client)
	return c
}

// admin lets the parent through: an administrator session, or anyone while
// no password is set (the admin area is open then, as on :8090; the code
// on the screen still needs someone at the box). Writes from another web
// site are refused, as on :8090.
func (h *handler) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if strings.EqualFold(r.Header.Get("Sec-Fetch-Site"), "cross-site") {
			h.fail(w, r, fault.New(fault.Forbidden, "cross-site request denied"))
			return
		}
		if o := r.Header.Get("Origin"); o != "" {
			u, err := url.Parse(o)
			if err != nil || u.Scheme != "https" || !strings.EqualFold(u.Host, r.Host) {
				h.fail(w, r, fault.New(fault.Forbidden, "origin denied"))
				return
			}
		}
		if h.Auth.Protected() {
			ok := false
			for _, ck := range r.Cookies() {
				if ck.Name == auth.CookieName && h.Auth.Valid(ck.Value) {
					ok = true
				}
			}
			if !ok {
				h.fail(w, r, fault.New(fault.Unauthorized, "admin authentication required"))
				return
			}
		}
		next(w, r)
	}
}
