package box

import (
	"context"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/onscreen"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// Without a screen the facet answers for it: a bad message is still the
// client's mistake, a good one finds no screen.
func TestScreenFacetWithoutScreen(t *testing.T) {
	b := newTestBox(t, nil)
	sc := b.Screen()
	if sc.Attached() {
		t.Fatal("a screen is attached to a new core")
	}
	if _, err := sc.ShowMessage(message.Request{}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("a message without text: %v, want invalid", err)
	}
	text := "Essen!"
	if _, err := sc.ShowMessage(message.Request{Message: &text}); !errors.Is(err, ErrNoScreen) {
		t.Errorf("a message without a screen: %v", err)
	}
	if _, err := sc.Screenshot(context.Background()); !errors.Is(err, ErrNoScreen) {
		t.Errorf("a screenshot without a screen: %v", err)
	}
	if sc.ActiveMessage() != nil || sc.UIState().Screen != "home" {
		t.Error("a screen that is not there shows something")
	}
}

// recordingScreen is the screen as it attaches: what it was asked.
type recordingScreen struct {
	shown []string
	low   bool
}

func (s *recordingScreen) ShowRefusal(*rules.Refusal) {}
func (s *recordingScreen) SetBatteryLow(low bool)     { s.low = low }
func (s *recordingScreen) ShowMessage(r message.Request) (message.Message, error) {
	s.shown = append(s.shown, *r.Message)
	return message.Message{ID: uint64(len(s.shown)), Message: *r.Message}, nil
}
func (s *recordingScreen) ActiveMessage() *message.Message { return nil }
func (s *recordingScreen) UIState() onscreen.UIState       { return onscreen.UIState{Screen: "playing"} }
func (s *recordingScreen) Screenshot(context.Context) ([]byte, error) {
	return []byte("png"), nil
}

// The APIs reach the attached screen through the facet only.
func TestScreenFacetReachesTheAttachedScreen(t *testing.T) {
	b := newTestBox(t, nil)
	s := &recordingScreen{}
	b.AttachScreen(s)
	text := "Essen!"
	if m, err := b.Screen().ShowMessage(message.Request{Message: &text}); err != nil || m.ID != 1 || len(s.shown) != 1 {
		t.Errorf("message: %+v %v, the screen was shown %v", m, err, s.shown)
	}
	if png, err := b.Screen().Screenshot(context.Background()); err != nil || string(png) != "png" {
		t.Errorf("screenshot: %q %v", png, err)
	}
	if st := b.Screen().UIState(); st.Screen != "playing" {
		t.Errorf("ui state %+v", st)
	}
}

// fakeIdentity is the home-automation API's key as haserve reports it.
type fakeIdentity struct{}

func (fakeIdentity) Fingerprint() string     { return "ab12" }
func (fakeIdentity) Leaf() *x509.Certificate { return nil }

// The pairing is the core's: off until the API serves, then the admin API
// opens the window and the screen sees the prompt, both through the facet.
func TestHomeAutomationFacet(t *testing.T) {
	b := newTestBox(t, nil)
	ha := b.HomeAutomation()
	if ha.Pairing() == nil {
		t.Fatal("a box with an id has no pairing")
	}
	if _, err := ha.Status(); !errors.Is(err, ErrHomeAutomationOff) {
		t.Errorf("status while off: %v", err)
	}
	if _, err := ha.Enable(nil); !errors.Is(err, ErrHomeAutomationOff) {
		t.Errorf("enable while off: %v", err)
	}
	if ha.Prompt() != nil || ha.Fingerprint() != "" {
		t.Error("the screen is shown a pairing while the API is off")
	}
	ha.Serving(fakeIdentity{}, 8443)
	changed := ha.Changed()
	if _, err := ha.Enable([]string{"read"}); err != nil {
		t.Fatal(err)
	}
	<-changed // the screen wakes
	if p := ha.Prompt(); p == nil || p.Code != "" || len(p.Granted) != 1 {
		t.Errorf("prompt after enable: %+v", p)
	}
	st, err := ha.Status()
	if err != nil {
		t.Fatal(err)
	}
	if m := st.(map[string]any); m["fingerprint"] != "ab12" || m["port"] != 8443 || m["device_id"] != b.ID() {
		t.Errorf("status %v", m)
	}
	if ha.Fingerprint() != "ab12" {
		t.Errorf("fingerprint %q", ha.Fingerprint())
	}
	if err := ha.Cancel(); err != nil || ha.Prompt() != nil {
		t.Errorf("cancel: %v, prompt %+v", err, ha.Prompt())
	}
}
