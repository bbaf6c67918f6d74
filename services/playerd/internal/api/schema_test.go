package api

import (
	"strings"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// wiringStore is the input wiring as the box keeps it.
type wiringStore struct {
	w    wiring.Wiring
	sets int
}

// Get is a copy, as the box's own: a caller may change it.
func (s *wiringStore) Get() wiring.Wiring {
	w := s.w
	w.Readers = append([]wiring.Match{}, w.Readers...)
	w.GPIO.Buttons = append([]wiring.Button{}, w.GPIO.Buttons...)
	return w
}
func (s *wiringStore) Status() wiring.Status { return wiring.Status{} }
func (s *wiringStore) Put(w wiring.Wiring) error {
	if err := w.Validate(); err != nil {
		return err
	}
	s.sets++
	s.w = w
	return nil
}

// A GPIO button without its line is refused (the schema requires it) and
// changes nothing; it neither becomes line 0 nor keeps the line of the
// button it replaces.
func TestInputButtonNeedsItsLine(t *testing.T) {
	store := &wiringStore{w: wiring.Default()}
	b := newBox(t, func(d *Deps) { d.Input = store })
	if code, body, _ := b.call("PUT", "/api/admin/input", `{"gpio":{"buttons":[{"line":17,"action":"toggle"}]}}`); code != 200 {
		t.Fatalf("a button with its line: %d %v", code, body)
	}
	for _, body := range []string{
		`{"gpio":{"buttons":[{"action":"next"}]}}`,
		`{"gpio":{"buttons":[{"line":null,"action":"next"}]}}`,
		`{"gpio":{"buttons":[{"line":5,"action":"next"},{"long_action":"power_off"}]}}`,
	} {
		code, out, _ := b.call("PUT", "/api/admin/input", body)
		if code != 400 || out["error"] != "gpio.buttons: every button needs its line" {
			t.Errorf("%s: %d %v, want 400", body, code, out)
		}
	}
	if code, out, _ := b.call("PUT", "/api/admin/input", `{"gpio":{"buttons":[{"line":5,"action":"next","pin":3}]}}`); code != 400 || !strings.Contains(out["error"].(string), `unknown field "pin"`) {
		t.Errorf("a button with an unknown field: %d %v", code, out)
	}
	if bs := store.w.GPIO.Buttons; store.sets != 1 || len(bs) != 1 || bs[0].Line != 17 || bs[0].Action != "toggle" {
		t.Errorf("after the refusals: %d saves, buttons %+v; want the first only", store.sets, bs)
	}
}

// A login without a password is a malformed request, not a wrong password:
// 400, and it does not count toward the lockout.
func TestLoginWithoutPasswordIsNotAnAttempt(t *testing.T) {
	b := newBox(t, nil)
	if code, body := b.send(lan, "PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`, ""); code != 200 {
		t.Fatalf("first password: %d %s", code, body)
	}
	for range 10 {
		for _, body := range []string{`{}`, `{"password":null}`} {
			if code, out := b.send(lan, "POST", "/api/admin/login", body, ""); code != 400 || !strings.Contains(out, "password is required") {
				t.Fatalf("login %s: %d %s, want 400", body, code, out)
			}
		}
	}
	if code, out := b.send(lan, "POST", "/api/admin/login", `{"password":"correct horse battery"}`, ""); code != 200 {
		t.Errorf("the right password after 20 logins without one: %d %s", code, out)
	}
	// Wrong passwords still count.
	code := 0
	for range 6 {
		code, _ = b.send(lan, "POST", "/api/admin/login", `{"password":"wrong"}`, "")
	}
	if code != 429 {
		t.Errorf("the sixth wrong password: %d, want 429", code)
	}
}

// The rescan's body is an empty object, checked like every JSON body.
func TestRescanBody(t *testing.T) {
	b := newBox(t, nil)
	for _, tc := range []struct {
		body, ctype string
		code        int
	}{
		{`{}`, "application/json", 200},
		{`{"deep":true}`, "application/json", 400},
		{``, "application/json", 400},
		{`[]`, "application/json", 400},
		{`{}`, "text/plain", 415},
	} {
		code, out, _ := b.call("POST", "/api/admin/library/rescan", tc.body, "Content-Type", tc.ctype)
		if code != tc.code {
			t.Errorf("rescan %q (%s): %d %v, want %d", tc.body, tc.ctype, code, out, tc.code)
		}
	}
}
