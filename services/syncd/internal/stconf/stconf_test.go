package stconf

import (
	"encoding/xml"
	"strings"
	"testing"
)

const (
	self  = "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA"
	other = "BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB"
)

// Everything that would reach beyond the household is written off, and
// every box is in every folder; a name with markup stays text.
func TestRender(t *testing.T) {
	out, err := Render(Config{GUI: "127.0.0.1:8384", APIKey: "k", Listen: 22000, Self: self, Name: `Kinder<zimmer>&"`,
		Devices: []Device{{ID: other, Name: "oma", Address: "tcp://10.0.0.2:22000"}},
		Folders: []Folder{{ID: "storybox-media", Label: "Media", Path: "/perm/media"}}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		`<configuration version="37">`,
		"<globalAnnounceEnabled>false</globalAnnounceEnabled>",
		"<localAnnounceEnabled>false</localAnnounceEnabled>",
		"<relaysEnabled>false</relaysEnabled>",
		"<natEnabled>false</natEnabled>",
		"<urAccepted>-1</urAccepted>",
		"<crashReportingEnabled>false</crashReportingEnabled>",
		"<autoUpgradeIntervalH>0</autoUpgradeIntervalH>",
		"<listenAddress>tcp://:22000</listenAddress>",
		"<address>127.0.0.1:8384</address>",
		`<device id="` + other + `"></device>`,
		`name="Kinder&lt;zimmer&gt;&amp;&#34;"`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no %s in\n%s", want, s)
		}
	}
	var back configuration
	if err := xml.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	if len(back.Folders) != 1 || len(back.Folders[0].Devices) != 2 || len(back.Devices) != 2 {
		t.Errorf("folders %+v devices %+v", back.Folders, back.Devices)
	}
}

func TestRenderRefuses(t *testing.T) {
	good := Config{GUI: "127.0.0.1:8384", APIKey: "k", Listen: 22000, Self: self}
	for name, edit := range map[string]func(*Config){
		"self":    func(c *Config) { c.Self = "nope" },
		"device":  func(c *Config) { c.Devices = []Device{{ID: strings.ToLower(other), Address: "dynamic"}} },
		"address": func(c *Config) { c.Devices = []Device{{ID: other, Address: "http://x:1"}} },
		"port":    func(c *Config) { c.Devices = []Device{{ID: other, Address: "tcp://x:0"}} },
		"key":     func(c *Config) { c.APIKey = "" },
		"listen":  func(c *Config) { c.Listen = 0 },
	} {
		c := good
		edit(&c)
		if _, err := Render(c); err == nil {
			t.Errorf("%s: rendered", name)
		}
	}
	if _, err := Render(good); err != nil {
		t.Fatal(err)
	}
}
