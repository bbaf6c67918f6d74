package mdns

import "testing"

// Names dnssd would mangle are refused before anything is announced. (The
// advertisement itself is multicast and is not sent from a unit test onto
// the machine's real network.)
func TestValidate(t *testing.T) {
	ok := Advertiser{Host: "storybox", Services: []Service{{Name: "storybox", Type: "_http._tcp", Port: 8090}}}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []Advertiser{
		{Host: ""},
		{Host: "story.box"},
		{Host: "story box"},
		{Host: "storybox", Services: []Service{{Name: "storybox", Type: "_http._tcp"}}},
		{Host: "storybox", Services: []Service{{Name: "", Type: "_http._tcp", Port: 1}}},
	} {
		if a.Validate() == nil {
			t.Errorf("%+v accepted", a)
		}
	}
}
