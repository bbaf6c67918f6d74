package message

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
)

// screen records what it was asked to show, or refuses with err.
type screen struct {
	shown []onscreen.MessageRequest
	err   error
}

func (s *screen) ShowMessage(r onscreen.MessageRequest) (onscreen.Message, error) {
	if s.err != nil {
		return onscreen.Message{}, s.err
	}
	s.shown = append(s.shown, r)
	return onscreen.Message{ID: 7, Message: *r.Message}, nil
}

func serve(s *answer.Surface, d Shower, body string) *httptest.ResponseRecorder {
	h := Handler(s, d, func(m onscreen.Message) any { return map[string]any{"id": m.ID} })
	r := httptest.NewRequest(http.MethodPost, "/message", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h(w, r)
	return w
}

func TestMessageShownAndAnswered(t *testing.T) {
	d := &screen{}
	w := serve(&answer.Surface{}, d, `{"message":"Essen!","title":"Mama"}`)
	if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"id":7}` || len(d.shown) != 1 {
		t.Fatalf("%d %s, shown %d", w.Code, w.Body, len(d.shown))
	}
}

// The body rules are the surface's: strict refuses an unknown field that
// lenient lets through, and neither shows anything on a refusal.
func TestMessageBodyRulesAreTheSurfaces(t *testing.T) {
	body := `{"message":"hi","colour":"red"}`
	d := &screen{}
	if w := serve(&answer.Surface{}, d, body); w.Code != 400 || !strings.Contains(w.Body.String(), `unknown field \"colour\"`) || len(d.shown) != 0 {
		t.Errorf("strict: %d %s, shown %d", w.Code, w.Body, len(d.shown))
	}
	if w := serve(&answer.Surface{Body: answer.Body{Lenient: true}}, d, body); w.Code != 200 || len(d.shown) != 1 {
		t.Errorf("lenient: %d %s", w.Code, w.Body)
	}
	big := `{"message":"` + strings.Repeat("a", 100) + `"}`
	if w := serve(&answer.Surface{Body: answer.Body{Limit: 64}}, d, big); w.Code != 413 || len(d.shown) != 1 {
		t.Errorf("too large: %d %s", w.Code, w.Body)
	}
}

// Without a screen a bad message is still refused for what it is; a good
// one hears that the screen is missing.
func TestMessageWithoutScreen(t *testing.T) {
	if w := serve(&answer.Surface{}, nil, `{"title":"no text"}`); w.Code != 400 || !strings.Contains(w.Body.String(), "message is required") {
		t.Errorf("bad body: %d %s", w.Code, w.Body)
	}
	if w := serve(&answer.Surface{}, nil, `{"message":"hi"}`); w.Code != 503 || w.Header().Get("Retry-After") == "" {
		t.Errorf("no screen: %d %s", w.Code, w.Body)
	}
}

// A refusal of the screen keeps its kind and wait; the home-automation
// API's copy of this handler turned it into a 500.
func TestMessageScreenRefusalKeepsItsKind(t *testing.T) {
	d := &screen{err: fault.Retry(fault.Busy, 2*time.Second, "the screen is busy")}
	w := serve(&answer.Surface{}, d, `{"message":"hi"}`)
	if w.Code != 429 || w.Header().Get("Retry-After") != "2" || !strings.Contains(w.Body.String(), "the screen is busy") {
		t.Errorf("busy: %d %s Retry-After %q", w.Code, w.Body, w.Header().Get("Retry-After"))
	}
	d.err = errors.New("/dev/fb0: broken")
	w = serve(&answer.Surface{}, d, `{"message":"hi"}`)
	if w.Code != 500 || strings.TrimSpace(w.Body.String()) != `{"error":"message could not be shown"}` {
		t.Errorf("failure: %d %s", w.Code, w.Body)
	}
}
