package hav1

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
)

// maxCAPEM is what the client accepts for the CA.
const maxCAPEM = 32 << 10

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]any{"ok": true, "api_version": 1})
}

// caPEM is GET /tls/ca: the CA certificate, which is public. A client
// fetches it over a connection pinned to the server certificate whose
// fingerprint the parent confirmed.
func (h *handler) caPEM(w http.ResponseWriter, r *http.Request) {
	pem := h.CA.CAPEM()
	if len(pem) == 0 || len(pem) > maxCAPEM {
		h.fail(w, r, fault.New(fault.Unavailable, "no CA certificate"))
		return
	}
	w.Header().Set("Content-Type", "application/x-pem-file")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(pem)
}

// pairStart is POST /pair/start. Clients send "Authorization: Bearer "
// with an empty token here; it is not looked at.
func (h *handler) pairStart(w http.ResponseWriter, r *http.Request) {
	var req pairing.StartRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.ClientID == "" {
		h.fail(w, r, malformed("client_id is required"))
		return
	}
	st, err := h.Pairing.Start(req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.logPairing("pairing started", "client", req.ClientName)
	answer.JSON(w, http.StatusOK, st)
}

func (h *handler) pairConfirm(w http.ResponseWriter, r *http.Request) {
	var req pairing.ConfirmRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.PairingID == "" || req.ClientID == "" || req.Code == "" {
		h.fail(w, r, malformed("pairing_id, client_id and code are required"))
		return
	}
	g, err := h.Pairing.Confirm(req)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	h.logPairing("client paired", "client_id", req.ClientID, "scopes", g.Scopes)
	answer.JSON(w, http.StatusOK, g)
}

type enableRequest struct {
	Scopes []string `json:"scopes"`
}

// pairEnable is POST /pair/enable: the parent opens the window. The body
// is optional; its scopes are what a client may be granted (default read
// and control).
func (h *handler) pairEnable(w http.ResponseWriter, r *http.Request) {
	var req enableRequest
	if r.ContentLength != 0 {
		if err := jsonBody.Decode(r, &req); err != nil {
			h.fail(w, r, err)
			return
		}
	}
	res, err := h.Pairing.EnableNamed(req.Scopes)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, res)
}

type revokeRequest struct {
	ClientID string `json:"client_id"`
}

// pairRevoke is POST /pair/revoke: a client ends its own pairing. Others
// are revoked by the parent in the admin API.
func (h *handler) pairRevoke(w http.ResponseWriter, r *http.Request, c pairing.Client) {
	var req revokeRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.ClientID == "" {
		h.fail(w, r, malformed("client_id is required"))
		return
	}
	if req.ClientID != c.ID {
		h.fail(w, r, &fault.Error{Kind: fault.Forbidden, Msg: "a client can revoke only its own pairing", Cause: errScope})
		return
	}
	if err := h.Pairing.Revoke(c.ID); err != nil {
		h.fail(w, r, err)
		return
	}
	h.logPairing("client revoked itself", "client_id", c.ID)
	answer.JSON(w, http.StatusOK, okBody)
}

// logPairing notes pairing events; never the code or a token.
func (h *handler) logPairing(msg string, args ...any) {
	if h.log != nil {
		h.log.Info(msg, args...)
	}
}
