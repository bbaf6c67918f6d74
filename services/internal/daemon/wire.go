package daemon

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"

	"github.com/storybox/storybox/services/internal/fault"
)

// ErrorBody is every error answer on a daemon's socket. Kind is a fault
// kind ("invalid", "conflict", "unavailable", "upstream", …), so the
// client keeps the daemon's classification.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
}

// MaxBody bounds a request body on a daemon's socket.
const MaxBody = 64 << 10

// WriteJSON answers with v as JSON. Socket answers are never cached.
func WriteJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// Answer writes v, or err when it is not nil.
func Answer(w http.ResponseWriter, r *http.Request, log *slog.Logger, v any, err error) {
	if err != nil {
		Fail(w, r, log, err)
		return
	}
	WriteJSON(w, http.StatusOK, v)
}

// Fail answers err with the status of its kind and what a client may be
// told of it (fault.Message). Failures of the daemon or of what it needed
// are logged with their cause; refusals are not, and nothing logs a
// request body (one of netd's carries a passphrase).
func Fail(w http.ResponseWriter, r *http.Request, log *slog.Logger, err error) {
	k := fault.KindOf(err)
	if (k == fault.Internal || k == fault.Upstream || k == fault.Unavailable) && log != nil {
		log.Warn("request failed", "method", r.Method, "path", r.URL.Path, "error", err)
	}
	WriteJSON(w, fault.HTTPStatus(k), ErrorBody{Error: fault.Message(err), Kind: string(k)})
}

// Decode reads the request's body, one JSON object of known fields, into
// v. Its errors are of the fault kinds Unsupported and Invalid and never
// quote the body.
func Decode(r *http.Request, v any) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return fault.New(fault.Unsupported, "Content-Type must be application/json")
	}
	dec := json.NewDecoder(io.LimitReader(r.Body, MaxBody))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fault.New(fault.Invalid, "field %q has the wrong type", te.Field)
		}
		return fault.New(fault.Invalid, "body must be one JSON object with known fields")
	}
	if dec.More() {
		return fault.New(fault.Invalid, "expected one JSON object")
	}
	return nil
}
