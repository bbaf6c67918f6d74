// Package radio is netd's view of the Wi-Fi hardware: adapters, scans,
// joining and the link, behind a small interface so that the station logic
// is tested against a fake (radiotest) and runs on nl80211 (NL80211).
//
// Joining a protected network needs the chip to do the WPA2 4-way
// handshake itself ("PSK offload", which the Raspberry Pi's Broadcom and
// Cypress chips have through brcmfmac): the box has no wpa_supplicant. An
// adapter without it joins open networks only and says so (ErrNoOffload).
package radio

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

// Radio is the Wi-Fi hardware.
type Radio interface {
	// Adapters lists the Wi-Fi interfaces.
	Adapters() ([]Adapter, error)
	// Up sets the interface administratively up (scans and joins need it).
	Up(iface string) error
	// Scan scans and returns what the interface sees. It takes a few
	// seconds on real hardware.
	Scan(ctx context.Context, iface string) ([]BSS, error)
	// Join starts joining ssid; psk empty means an open network. It
	// returns once the request is accepted: Link tells when it succeeded.
	Join(iface, ssid, psk string) error
	// Leave disconnects.
	Leave(iface string) error
	// Link is the interface's association now.
	Link(iface string) (Link, error)
	// SetCountry sets the regulatory country for every adapter; Country
	// reads it back.
	SetCountry(code string) error
	Country() (string, error)
}

// Adapter is one Wi-Fi interface.
type Adapter struct {
	Name    string
	MAC     net.HardwareAddr
	Driver  string
	Station bool // can be a client (managed mode)
	Up      bool
	// PSKOffload: the chip does the WPA2-Personal handshake itself.
	PSKOffload bool
}

// Security of a network.
type Security string

// Securities netd tells apart. Transition networks (WPA2 and WPA3 on one
// name) are joined as WPA2; WPA3-only and enterprise networks cannot be
// joined (ErrUnsupportedSecurity).
const (
	Open       Security = "open"
	WPA2       Security = "wpa2"
	WPA2WPA3   Security = "wpa2/wpa3"
	WPA3       Security = "wpa3"
	Enterprise Security = "enterprise"
)

// Joinable with a passphrase (or without, when Open).
func (s Security) Joinable() bool { return s == Open || s == WPA2 || s == WPA2WPA3 }

// BSS is one access point seen in a scan.
type BSS struct {
	SSID         string
	BSSID        net.HardwareAddr
	SignalDBM    int
	FrequencyMHz int
	Security     Security
	LastSeen     time.Duration
}

// Link is the state of an interface's association.
type Link struct {
	Associated   bool
	SSID         string
	BSSID        net.HardwareAddr
	SignalDBM    int // 0 when unknown
	FrequencyMHz int
}

// Errors the station logic acts on.
var (
	// ErrNoOffload: the adapter cannot join a protected network by itself.
	ErrNoOffload = fault.New(fault.Conflict, "this Wi-Fi adapter cannot do the WPA2 handshake itself (no 4-way handshake offload), so it can join open networks only")
	// ErrUnsupportedSecurity: WPA3-only and enterprise networks.
	ErrUnsupportedSecurity = fault.New(fault.Conflict, "this network's security (WPA3-only or enterprise) is not supported; use a WPA2 or WPA2/WPA3 network")
	// ErrNoAdapter: the interface named does not exist or is not Wi-Fi.
	ErrNoAdapter = fault.New(fault.Conflict, "no enabled and ready Wi-Fi adapter found")
)

// Percent turns a signal in dBm into the 0–100 scale that the kernel's
// /proc/net/wireless uses (cfg80211: -110 dBm is 0, -40 dBm and above is
// full), so netd and the kernel agree about the same link.
func Percent(dbm int) int {
	d := min(max(dbm, -110), -40)
	return (d + 110) * 100 / 70
}

// IsBusy reports whether err means the adapter is busy with another scan
// or join; such an operation is worth repeating.
func IsBusy(err error) bool {
	return errors.Is(err, errBusy)
}

// None is the Radio of a kernel without Wi-Fi: every request says there is
// no adapter.
type None struct{}

func (None) Adapters() ([]Adapter, error)                { return nil, nil }
func (None) Up(string) error                             { return ErrNoAdapter }
func (None) Scan(context.Context, string) ([]BSS, error) { return nil, ErrNoAdapter }
func (None) Join(string, string, string) error           { return ErrNoAdapter }
func (None) Leave(string) error                          { return nil }
func (None) Link(string) (Link, error)                   { return Link{}, ErrNoAdapter }
func (None) SetCountry(string) error                     { return nil }
func (None) Country() (string, error)                    { return "", nil }
