package daemon

import (
	"log/slog"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
)

// ErrorBody is every error answer on a daemon's socket. Kind is a fault
// kind ("invalid", "conflict", "unavailable", "upstream", …), so the
// client keeps the daemon's classification.
type ErrorBody struct {
	Error string `json:"error"`
	Kind  string `json:"kind"`
	// Code is the error's code when it has one of its own
	// (fault.Error.Coded), which the client passes on to its caller so a
	// page can say it in its own words.
	Code string `json:"code,omitempty"`
}

// MaxBody bounds a request body on a daemon's socket.
const MaxBody = 64 << 10

// Socket is how a daemon's socket answers: bodies are one JSON object of
// known fields, at most MaxBody; errors are ErrorBody with the status of
// their kind. Failures of the daemon or of what it needed (the board, an
// access point) are logged with their cause; refusals are not, and
// nothing logs a request body (one of netd's carries a passphrase).
func Socket(log *slog.Logger) *answer.Surface {
	return &answer.Surface{
		Body:   answer.Body{Limit: MaxBody},
		Shape:  errorShape,
		Log:    log,
		Logged: []fault.Kind{fault.Internal, fault.Upstream, fault.Unavailable},
	}
}

func errorShape(err error) (int, any) {
	body := ErrorBody{Error: fault.Message(err), Kind: string(fault.KindOf(err))}
	if c := fault.CodeOf(err); c != fault.KindCode(fault.KindOf(err)) {
		body.Code = c
	}
	return answer.Status(err), body
}

// Handler serves mux on a daemon's socket through s: its own 404 and 405
// are JSON like every other answer, and no answer is cached.
func Handler(s *answer.Surface, mux *http.ServeMux) http.Handler {
	h := s.Mux(mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}
