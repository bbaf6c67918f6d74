package api

import (
	"errors"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// errorCode is the code of an error body: a stable word for programs,
// which the admin page translates, where the message is English. A rule's
// refusal is "refused_" and its reason; every other error has the code its
// package gave it (fault.Error.Code) or its kind's (fault.CodeOf).
func errorCode(err error) string {
	var refusal *rules.Refusal
	if errors.As(err, &refusal) && refusal.Reason != "" {
		return "refused_" + refusal.Reason
	}
	if errors.Is(err, answer.ErrNoMethod) {
		return "method_not_allowed"
	}
	return fault.CodeOf(err)
}
