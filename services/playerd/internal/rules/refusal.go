package rules

import (
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Reasons of a refusal, as the API's 403 body and the status name them.
const (
	ReasonBedtime    = "bedtime"
	ReasonDailyLimit = "daily_limit"
	ReasonLocked     = "locked"
)

// Refusal is a rule's "no": of kind fault.Forbidden, with the rule and
// until when it holds, for the API body and the touch screen's friendly
// screen.
type Refusal struct {
	Reason string    // ReasonBedtime, ReasonDailyLimit or ReasonLocked
	Msg    string    // "bedtime until 07:00"
	Until  time.Time // zero when it holds until a parent changes it
}

func (r *Refusal) Error() string { return r.Msg }

// Unwrap gives the kind: errors.Is(err, fault.Forbidden).
func (r *Refusal) Unwrap() error { return fault.Forbidden }
