// Package radiotest is a fake radio.Radio: access points that a test puts
// in reach, takes away and brings back, with passphrases the fake checks
// the way an access point would (a wrong one never associates).
package radiotest

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/storybox/storybox/services/netd/internal/radio"
)

// AP is an access point in the fake's air.
type AP struct {
	SSID      string
	BSSID     net.HardwareAddr
	SignalDBM int
	Security  radio.Security
	PSK       string // the passphrase it accepts
}

// Radio is the fake. Its zero value has no adapter; use New.
type Radio struct {
	mu       sync.Mutex
	adapters []radio.Adapter
	aps      map[string]AP // by SSID
	link     map[string]radio.Link
	country  string
	joins    int
	scanErr  error
}

// New returns a fake with one station adapter, wlan0, that can offload the
// WPA2 handshake when offload is true.
func New(offload bool) *Radio {
	return &Radio{
		adapters: []radio.Adapter{{Name: "wlan0", MAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, Driver: "fake", Station: true, PSKOffload: offload}},
		aps:      map[string]AP{},
		link:     map[string]radio.Link{},
		country:  "00",
	}
}

// Joins counts Join calls.
func (r *Radio) Joins() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.joins
}

// FailScans makes every scan fail with err (nil: scans work again).
func (r *Radio) FailScans(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scanErr = err
}

// Put brings ap into reach (or changes it).
func (r *Radio) Put(ap AP) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.aps[ap.SSID] = ap
}

// Remove takes the access point away: a station associated with it drops,
// as when a router reboots.
func (r *Radio) Remove(ssid string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.aps, ssid)
	for name, l := range r.link {
		if l.SSID == ssid {
			delete(r.link, name)
		}
	}
}

func (r *Radio) adapter(name string) (radio.Adapter, error) {
	for _, a := range r.adapters {
		if a.Name == name {
			return a, nil
		}
	}
	return radio.Adapter{}, fmt.Errorf("%w: %s", radio.ErrNoAdapter, name)
}

// Adapters implements radio.Radio.
func (r *Radio) Adapters() ([]radio.Adapter, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]radio.Adapter(nil), r.adapters...), nil
}

// Up implements radio.Radio.
func (r *Radio) Up(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.adapters {
		if r.adapters[i].Name == name {
			r.adapters[i].Up = true
			return nil
		}
	}
	return fmt.Errorf("%w: %s", radio.ErrNoAdapter, name)
}

// Scan implements radio.Radio.
func (r *Radio) Scan(ctx context.Context, name string) ([]radio.BSS, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.adapter(name); err != nil {
		return nil, err
	}
	if r.scanErr != nil {
		return nil, r.scanErr
	}
	var out []radio.BSS
	for _, ap := range r.aps {
		out = append(out, radio.BSS{SSID: ap.SSID, BSSID: ap.BSSID, SignalDBM: ap.SignalDBM, FrequencyMHz: 2412, Security: ap.Security})
	}
	return out, nil
}

// Join implements radio.Radio: it associates at once when the access point
// is in reach and the passphrase fits, and never otherwise.
func (r *Radio) Join(name, ssid, psk string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.joins++
	a, err := r.adapter(name)
	if err != nil {
		return err
	}
	if psk != "" && !a.PSKOffload {
		return radio.ErrNoOffload
	}
	delete(r.link, name)
	ap, ok := r.aps[ssid]
	if !ok {
		return nil // the chip looks for it and gives up: no association
	}
	if ap.Security == radio.Open && psk != "" || ap.Security != radio.Open && ap.PSK != psk {
		return nil // the handshake fails: no association
	}
	r.link[name] = radio.Link{Associated: true, SSID: ssid, BSSID: ap.BSSID, SignalDBM: ap.SignalDBM, FrequencyMHz: 2412}
	return nil
}

// Leave implements radio.Radio.
func (r *Radio) Leave(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.link, name)
	return nil
}

// Link implements radio.Radio.
func (r *Radio) Link(name string) (radio.Link, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, err := r.adapter(name); err != nil {
		return radio.Link{}, err
	}
	return r.link[name], nil
}

// SetCountry implements radio.Radio.
func (r *Radio) SetCountry(code string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.country = code
	return nil
}

// Country implements radio.Radio.
func (r *Radio) Country() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.country, nil
}
