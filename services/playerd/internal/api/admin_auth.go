package api

import (
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/auth"
)

// authStatus is GET /api/admin/auth. While no password is set the admin
// area is open, so every caller counts as authenticated (as on the real box).
func (h *handler) authStatus(w http.ResponseWriter, r *http.Request) {
	protected := h.Auth.Protected()
	c := auth.CallerFrom(r.Context())
	answer.JSON(w, http.StatusOK, map[string]bool{"protected": protected, "authenticated": !protected || c.Admin})
}

type loginRequest struct {
	Password *string `json:"password"`
}

func (h *handler) login(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Password == nil {
		// Not an attempt at a password: refused before the lockout counts.
		h.fail(w, r, badRequest("password is required"))
		return
	}
	s, err := h.Auth.Login(r.Context(), auth.CallerFrom(r.Context()).Addr, *req.Password)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	setSessionCookie(w, r, s.Token, int(auth.SessionTTL.Seconds()))
	answer.JSON(w, http.StatusOK, map[string]bool{"authenticated": true})
}

// logout is POST /api/admin/logout; it takes no body and ends every session.
func (h *handler) logout(w http.ResponseWriter, r *http.Request) {
	h.Auth.Logout()
	setSessionCookie(w, r, "", -1)
	answer.JSON(w, http.StatusOK, map[string]bool{"authenticated": false})
}

type passwordRequest struct {
	Current string `json:"current_password"`
	New     string `json:"new_password"`
}

// setPassword is PUT /api/admin/password. While no password is set, anyone
// who can reach the box may set the first one: the admin area is open to
// them anyway, and the physical reset undoes a stranger's claim. Once one
// is set, the guard demands a session and the body the current password.
func (h *handler) setPassword(w http.ResponseWriter, r *http.Request) {
	var req passwordRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	c := auth.CallerFrom(r.Context())
	first := !h.Auth.Protected()
	s, err := h.Auth.SetPassword(r.Context(), c.Addr, req.Current, req.New)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if h.log != nil {
		h.log.Info("administrator password changed", slog.Bool("first", first), slog.String("from", c.Addr.String()))
	}
	setSessionCookie(w, r, s.Token, int(auth.SessionTTL.Seconds()))
	answer.JSON(w, http.StatusOK, map[string]bool{"protected": true, "authenticated": true})
}

// setSessionCookie sets (maxAge > 0) or clears (maxAge < 0) the session
// cookie: script cannot read it, other sites cannot send it, and over TLS
// it never travels in clear.
func setSessionCookie(w http.ResponseWriter, r *http.Request, token string, maxAge int) {
	http.SetCookie(w, &http.Cookie{
		Name:     auth.CookieName,
		Value:    token,
		Path:     "/",
		MaxAge:   maxAge,
		HttpOnly: true,
		Secure:   r.TLS != nil,
		SameSite: http.SameSiteStrictMode,
	})
}
