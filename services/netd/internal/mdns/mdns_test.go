package mdns

import (
	"strings"
	"testing"

	"github.com/storybox/storybox/services/internal/fault"
)

// Names dnssd would mangle are refused before anything is announced. (The
// advertisement itself is tested in a network namespace of its own,
// netns_test.go, never on the machine's real network.)
func TestValidate(t *testing.T) {
	ok := Advertiser{Host: "storybox", Services: []Service{{Name: "storybox", Type: "_http._tcp", Port: 8090}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []*Advertiser{
		{Host: ""},
		{Host: "story.box"},
		{Host: "story box"},
		{Host: "storybox", Services: []Service{{Name: "storybox", Type: "_http._tcp"}}},
		{Host: "storybox", Services: []Service{{Name: "", Type: "_http._tcp", Port: 1}}},
	} {
		if a.Validate() == nil {
			t.Errorf("%s %+v accepted", a.Host, a.Services)
		}
	}
}

func mupibox() Service {
	return Service{Name: "storybox", Type: "_mupibox._tcp", Port: 8443, Text: map[string]string{"api_version": "1", "device_id": "abc"}}
}

// Announcements replace one of their type, leave netd's own alone, and
// wake the responder only when they change something.
func TestAnnounce(t *testing.T) {
	a := &Advertiser{Host: "storybox", Services: []Service{{Name: "storybox", Type: "_http._tcp", Port: 8090}}}
	if err := a.Announce(mupibox()); err != nil {
		t.Fatal(err)
	}
	if len(a.wake) != 1 {
		t.Error("the responder was not woken")
	}
	<-a.wake
	if err := a.Announce(mupibox()); err != nil || len(a.wake) != 0 {
		t.Errorf("the same service again: %v, woken %v", err, len(a.wake) != 0)
	}
	moved := mupibox()
	moved.Port = 9443
	if err := a.Announce(moved); err != nil || len(a.wake) != 1 {
		t.Errorf("a new port: %v, woken %v", err, len(a.wake) != 0)
	}
	st := a.State()
	if st.Host != "storybox.local" || len(st.Services) != 2 || st.Services[0].Type != "_http._tcp" || st.Services[1].Port != 9443 {
		t.Errorf("state %+v", st)
	}
	for _, tc := range []struct {
		s    Service
		kind fault.Kind
	}{
		{Service{Name: "x", Type: "_http._tcp", Port: 1}, fault.Conflict},
		{Service{Name: "x", Type: "mupibox", Port: 1}, fault.Invalid},
		{Service{Name: "x", Type: "_MUPIBOX._tcp", Port: 1}, fault.Invalid},
		{Service{Name: "x", Type: "_a-very-long-name._tcp", Port: 1}, fault.Invalid},
		{Service{Name: "x", Type: "_x._tcp", Port: 70000}, fault.Invalid},
		{Service{Name: "a\nb", Type: "_x._tcp", Port: 1}, fault.Invalid},
		{Service{Name: strings.Repeat("x", 64), Type: "_x._tcp", Port: 1}, fault.Invalid},
		{Service{Name: "x", Type: "_x._tcp", Port: 1, Text: map[string]string{"a=b": "c"}}, fault.Invalid},
		{Service{Name: "x", Type: "_x._tcp", Port: 1, Text: map[string]string{"k": strings.Repeat("v", 254)}}, fault.Invalid},
	} {
		if err := a.Announce(tc.s); fault.KindOf(err) != tc.kind {
			t.Errorf("%+v: %v, want %s", tc.s, err, tc.kind)
		}
	}
	if err := a.Announce(Service{Name: "x", Type: "_x._tcp", Port: 1, Text: map[string]string{"k": strings.Repeat("v", 253)}}); err != nil {
		t.Errorf("TXT of 255 bytes: %v", err)
	}
	for i := len(a.State().Services) - 1; i < MaxAnnounced; i++ {
		_ = a.Announce(Service{Name: "x", Type: "_t" + string(rune('a'+i)) + "._tcp", Port: 1})
	}
	if err := a.Announce(Service{Name: "x", Type: "_one-more._tcp", Port: 1}); fault.KindOf(err) != fault.Conflict {
		t.Errorf("beyond %d services: %v", MaxAnnounced, err)
	}
	if err := a.Withdraw("_mupibox._tcp"); err != nil {
		t.Fatal(err)
	}
	if err := a.Withdraw("_mupibox._tcp"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("withdrawn twice: %v", err)
	}
}
