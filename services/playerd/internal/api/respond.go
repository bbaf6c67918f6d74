package api

import (
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// MaxBody is the largest JSON request body accepted.
const MaxBody = 64 << 10

// jsonBody are the API's body rules: at most MaxBody, and unknown fields
// are refused (the parent's page and apps are built with the box).
var jsonBody = answer.Body{Limit: MaxBody}

// errorBody is the one error shape of the API. A rule's refusal also
// names the rule and until when it holds.
type errorBody struct {
	Error  string     `json:"error"`
	Code   string     `json:"code"` // errorCode: for programs, and the admin page's translation
	Reason string     `json:"reason,omitempty"`
	Until  *time.Time `json:"until,omitempty"`
}

// errorShape is the API's error answer for err.
func errorShape(err error) (int, any) {
	body := errorBody{Error: fault.Message(err), Code: errorCode(err)}
	var refusal *rules.Refusal
	if errors.As(err, &refusal) {
		body.Reason = refusal.Reason
		if !refusal.Until.IsZero() {
			body.Until = &refusal.Until
		}
	}
	return answer.Status(err), body
}

// newSurface is how the API answers. Failures of the box itself are logged
// with their cause; refusals and 503 (a part that is down, which a poller
// would otherwise repeat into gokrazy's 100 log lines) are not.
func newSurface(log *slog.Logger) answer.Surface {
	return answer.Surface{Body: jsonBody, Shape: errorShape, Log: log}
}

// fail answers err (answer.Surface.Fail).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	h.surface.Fail(w, r, err)
}

func badRequest(format string, a ...any) error { return fault.New(fault.Invalid, format, a...) }
