package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/rules"
	"github.com/storybox/storybox/services/playerd/internal/settings"
)

func TestErrorCode(t *testing.T) {
	bad := settings.Defaults()
	bad.TimeZone = "Mars/Olympus"
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&rules.Refusal{Reason: rules.ReasonBedtime, Until: time.Now()}, "refused_bedtime"},
		{fmt.Errorf("command: %w", &rules.Refusal{Reason: rules.ReasonLocked}), "refused_locked"},
		{bad.Validate(), "settings_time_zone"},
		{fault.New(fault.NotFound, "no such folder"), "not_found"},
		{badRequest("volume must be a number"), "invalid"},
		{fmt.Errorf("plain"), "internal"},
	} {
		if got := errorCode(tc.err); got != tc.want {
			t.Errorf("errorCode(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	r := httptest.NewRequest(http.MethodDelete, "/api/status", nil)
	for err, want := range map[error]string{answer.NoRoute(r): "not_found", answer.NoMethod(r): "method_not_allowed"} {
		if got := errorCode(err); got != want {
			t.Errorf("errorCode(%v) = %q, want %q", err, got, want)
		}
	}
}
