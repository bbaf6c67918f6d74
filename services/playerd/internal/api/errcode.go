package api

import (
	"errors"
	"net/http"

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
	return fault.CodeOf(err)
}

// statusCode is the code of the answers written with a status but no
// error (no route, a method the route does not take, a foreign origin):
// the kind of that status.
func statusCode(status int) string {
	if status == http.StatusMethodNotAllowed {
		return "method_not_allowed"
	}
	for _, k := range fault.Kinds() {
		if fault.HTTPStatus(k) == status {
			return fault.KindCode(k)
		}
	}
	return fault.KindCode(fault.Internal)
}
