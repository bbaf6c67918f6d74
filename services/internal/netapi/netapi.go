// Package netapi is the JSON that netd serves on its Unix socket: what
// playerd passes on under /api/connectivity/, and the mDNS announcements
// playerd asks netd for. The connectivity shapes follow the real-world
// box's routes where it has them (adapters, scan, connect); status, known
// networks, the country and mDNS are this box's own.
// Nothing here ever carries a passphrase out of netd: Connect is the only
// body with one, and it only goes in.
package netapi

import "github.com/storybox/storybox/services/internal/daemon"

// Adapters is GET /adapters.
type Adapters struct {
	Adapters          []Adapter `json:"adapters"`
	PrimaryInterface  string    `json:"primary_interface"`
	SelectedInterface string    `json:"selected_interface"`
}

// Adapter is one Wi-Fi interface.
type Adapter struct {
	Interface string `json:"interface"`
	MAC       string `json:"mac"`
	Driver    string `json:"driver"`
	// State is "up" or "down" (administratively), or "connected" while
	// associated.
	State     string `json:"state"`
	Managed   bool   `json:"managed"` // a station (client) interface
	Usable    bool   `json:"usable"`  // netd can scan and join with it
	Enabled   bool   `json:"enabled"`
	Preferred bool   `json:"preferred"`
	Selected  bool   `json:"selected"`
	Active    bool   `json:"active"`
	// PSKOffload: the chip does the WPA2 4-way handshake itself, which is
	// how netd joins protected networks (there is no wpa_supplicant on the
	// box). Without it only open networks can be joined, and Note says so.
	PSKOffload bool   `json:"psk_offload"`
	Note       string `json:"note,omitempty"`
}

// Scan is GET /scan?interface=.
type Scan struct {
	Interface string    `json:"interface"`
	Networks  []Network `json:"networks"`
}

// Network is one network seen in a scan: the strongest access point of
// each name.
type Network struct {
	SSID          string `json:"ssid"`
	SignalPercent int    `json:"signal_percent"`
	SignalDBM     int    `json:"signal_dbm"`
	// Security is open, wpa2, wpa2/wpa3, wpa3 or enterprise.
	Security  string `json:"security"`
	Connected bool   `json:"connected"`
	Known     bool   `json:"known"`
	Interface string `json:"interface"`
}

// Connect is POST /connect. Password is empty for an open network.
type Connect struct {
	SSID      string `json:"ssid"`
	Password  string `json:"password"`
	Interface string `json:"interface"`
	// Priority among the known networks: the highest visible one is
	// joined. Optional; new networks get 0.
	Priority *int `json:"priority,omitempty"`
}

// Connected answers POST /connect.
type Connected struct {
	Connected bool   `json:"connected"`
	SSID      string `json:"ssid"`
	Interface string `json:"interface"`
}

// Forget is POST /forget.
type Forget struct {
	SSID string `json:"ssid"`
}

// Country is GET and PUT /country: the regulatory country (ISO 3166-1
// alpha-2, e.g. DE), which decides the allowed channels (12 and 13 only
// outside the US, for example).
type Country struct {
	Country string `json:"country"`
}

// Known is GET /networks: the saved networks, never their passphrases.
type Known struct {
	Networks []KnownNetwork `json:"networks"`
}

// KnownNetwork is one saved network.
type KnownNetwork struct {
	SSID     string `json:"ssid"`
	Priority int    `json:"priority"`
	Open     bool   `json:"open"` // saved without a passphrase
}

// States of Status.State.
const (
	StateNoAdapter    = "no_adapter"
	StateDisconnected = "disconnected"
	StateConnecting   = "connecting"
	StateConnected    = "connected"
)

// Status is GET /status.
type Status struct {
	State     string `json:"state"`
	Interface string `json:"interface"`
	SSID      string `json:"ssid"`
	BSSID     string `json:"bssid"`
	// Signal of the access point joined; null while not connected.
	SignalDBM     *int `json:"signal_dbm"`
	SignalPercent *int `json:"signal_percent"`
	FrequencyMHz  *int `json:"frequency_mhz"`
	// Addresses on the interface (CIDR), the first routable IPv4 one
	// separately, and the default gateway through it.
	Addresses []string `json:"addresses"`
	IPv4      *string  `json:"ipv4"`
	Gateway   *string  `json:"gateway"`
	Country   string   `json:"country"`
	// LastError tells why the last join failed or the link dropped;
	// empty after a success.
	LastError string `json:"last_error"`
	// NextAttempt is when netd tries to join again (RFC 3339), while it
	// is disconnected from every known network in reach.
	NextAttempt   *string `json:"next_attempt"`
	KnownNetworks int     `json:"known_networks"`
}

// Service is one service netd announces by mDNS: its own (the API and
// admin page as _http._tcp) and those other programs ask for with
// PUT /mdns/services (playerd's home-automation API as _mupibox._tcp). netd
// answers for the box's one host name, so a Service names no host.
type Service struct {
	// Name is the instance name shown to people, e.g. "storybox".
	Name string `json:"name"`
	// Type is the service type, e.g. "_mupibox._tcp"; one service of
	// each type is announced, a second PUT of a type replaces the first.
	Type string            `json:"type"`
	Port int               `json:"port"`
	Text map[string]string `json:"text,omitempty"`
}

// MDNS is GET /mdns: what netd announces now.
type MDNS struct {
	// Enabled is false when netd runs with -mdns=false; nothing is
	// announced then.
	Enabled bool `json:"enabled"`
	// Host is the name answered for, e.g. "storybox.local".
	Host string `json:"host"`
	// Addresses are what the running responder announces, as
	// "interface=address"; empty while the box has none.
	Addresses []string  `json:"addresses"`
	Services  []Service `json:"services"`
}

// Error is every error body: the daemons' one (daemon.ErrorBody).
type Error = daemon.ErrorBody
