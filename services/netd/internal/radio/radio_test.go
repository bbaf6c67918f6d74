//go:build linux

package radio

import (
	"testing"
	"time"

	"github.com/mdlayher/wifi"
)

// An access point the scan did not see again (cfg80211 keeps it listed for
// 30 s after it went) and a hidden one are left out; signal comes in
// hundredths of a dBm.
func TestSeen(t *testing.T) {
	got := seen([]*wifi.BSS{
		{SSID: "home", Signal: -4500, LastSeen: 900 * time.Millisecond},
		{SSID: "gone", Signal: -3000, LastSeen: 12 * time.Second},
		{SSID: "", Signal: -5000, LastSeen: time.Second},
	}, 5*time.Second)
	if len(got) != 1 || got[0].SSID != "home" || got[0].SignalDBM != -45 || got[0].Security != Open {
		t.Fatalf("seen: %+v", got)
	}
}

func TestSecurityFromRSN(t *testing.T) {
	rsn := func(akms ...wifi.RSNAKM) wifi.RSNInfo { return wifi.RSNInfo{Version: 1, AKMs: akms} }
	for _, tc := range []struct {
		rsn  wifi.RSNInfo
		want Security
	}{
		{wifi.RSNInfo{}, Open},
		{rsn(wifi.RSNAkmPSK), WPA2},
		{rsn(wifi.RSNAkmPSKSHA256, wifi.RSNAkmFTPSK), WPA2},
		{rsn(wifi.RSNAkmPSK, wifi.RSNAkmSAE), WPA2WPA3},
		{rsn(wifi.RSNAkmSAE), WPA3},
		{rsn(wifi.RSNAkm8021X), Enterprise},
		{rsn(wifi.RSNAkmTDLS), Enterprise},
	} {
		if got := security(tc.rsn); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.rsn.AKMs, got, tc.want)
		}
	}
	for s, ok := range map[Security]bool{Open: true, WPA2: true, WPA2WPA3: true, WPA3: false, Enterprise: false} {
		if s.Joinable() != ok {
			t.Errorf("%s joinable %v", s, !ok)
		}
	}
}

func TestPercent(t *testing.T) {
	for dbm, want := range map[int]int{-120: 0, -110: 0, -75: 50, -40: 100, -20: 100} {
		if got := Percent(dbm); got != want {
			t.Errorf("Percent(%d) = %d, want %d", dbm, got, want)
		}
	}
}

func TestExtFeature(t *testing.T) {
	f := []byte{0, 0b100}
	if !extFeature(f, 10) || extFeature(f, 9) || extFeature(f, 200) {
		t.Error("feature bits misread")
	}
}
