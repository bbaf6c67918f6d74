// Package message is the one handler of a message posted for the screen,
// served by the local API (POST /api/message) and the home-automation API
// (POST /api/v1/message): each surface brings its own body rules, error
// shape and answer.
package message

import (
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
)

// Shower shows a message on the screen.
type Shower interface {
	ShowMessage(onscreen.MessageRequest) (onscreen.Message, error)
}

// ErrNoDisplay answers a message while the box has no screen.
var ErrNoDisplay = fault.New(fault.Unavailable, "display unavailable")

// Handler serves a posted message through s onto d, answering what reply
// makes of the message shown. A bad body is refused even when d is nil (no
// screen): a client learns its own mistake before the box's. The rules are
// the screen's own (onscreen.MessageRequest.Check). A refusal of the screen
// keeps its kind (a busy screen is 429 with Retry-After, not a failure).
func Handler(s *answer.Surface, d Shower, reply func(onscreen.Message) any) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req onscreen.MessageRequest
		if err := s.Decode(r, &req); err != nil {
			s.Fail(w, r, err)
			return
		}
		if err := req.Check(); err != nil {
			s.Fail(w, r, err)
			return
		}
		if d == nil {
			s.Fail(w, r, ErrNoDisplay)
			return
		}
		m, err := d.ShowMessage(req)
		if err != nil {
			s.Fail(w, r, answer.Failed("message could not be shown", err))
			return
		}
		answer.JSON(w, http.StatusOK, reply(m))
	}
}
