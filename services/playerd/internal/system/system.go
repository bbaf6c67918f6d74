// Package system answers GET /api/system: whether the box is online, its
// Wi-Fi link and its battery, in the real-world box's shape, which Home
// Assistant reads every few seconds. A value the box cannot tell is null.
package system

// Status is the body of GET /api/system.
type Status struct {
	Online  bool    `json:"online"`
	Wifi    Wifi    `json:"wifi"`
	Battery Battery `json:"battery"`
}

// Wifi is the Wi-Fi link.
type Wifi struct {
	Connected      bool    `json:"connected"`
	Interface      *string `json:"interface"`
	SignalDBM      *int    `json:"signal_dbm"`
	QualityPercent *int    `json:"quality_percent"`
	IPv4           *string `json:"ipv4"`
}

// Battery is the box's battery; Available is false without one.
type Battery struct {
	Available bool `json:"available"`
	Percent   *int `json:"percent"`
	Charging  bool `json:"charging"`
}

// Network tells whether the box is online and how its Wi-Fi is. Kernel
// reads what the kernel knows; the network daemon, once the box has one,
// is another Network and can say more (the network it chose, why it is
// offline).
type Network interface {
	Network() (online bool, wifi Wifi)
}

// Reader puts the parts together.
type Reader struct {
	Net Network
	// Battery is nil on a box without a battery board service.
	Battery func() Battery
}

// Read returns the status now. It never fails: what cannot be read is
// reported as not connected or unknown, because a client polling this must
// not fail its whole update over one part of it.
func (r Reader) Read() Status {
	var s Status
	if r.Net != nil {
		s.Online, s.Wifi = r.Net.Network()
	}
	if r.Battery != nil {
		s.Battery = r.Battery()
	}
	return s
}
