package system

import (
	"net"
	"slices"

	"github.com/prometheus/procfs"
)

// Link is one network interface as Kernel needs it.
type Link struct {
	Name     string
	Up       bool // administratively up
	Running  bool // carrier; for Wi-Fi: associated with an access point
	Loopback bool
	Addrs    []net.IP
}

// Kernel is the Network the kernel tells: the interfaces, and the Wi-Fi
// link from /proc/net/wireless.
type Kernel struct {
	fs    procfs.FS
	fsErr error
	links func() ([]Link, error)
}

// NewKernel reads procRoot (normally /proc) and the host's interfaces.
func NewKernel(procRoot string) *Kernel {
	return newKernel(procRoot, hostLinks)
}

func newKernel(procRoot string, links func() ([]Link, error)) *Kernel {
	fs, err := procfs.NewFS(procRoot)
	return &Kernel{fs: fs, fsErr: err, links: links}
}

// Network says the box is online when an interface other than loopback is
// up with a routable address (a link-local one does not reach anything).
// The Wi-Fi interface is the first wireless one that is associated, or the
// first wireless one at all; its signal is reported only while associated.
func (k *Kernel) Network() (bool, Wifi) {
	links, err := k.links()
	if err != nil {
		links = nil
	}
	online := false
	byName := make(map[string]Link, len(links))
	for _, l := range links {
		byName[l.Name] = l
		if l.Up && !l.Loopback && slices.ContainsFunc(l.Addrs, routable) {
			online = true
		}
	}
	var wl []*procfs.Wireless
	if k.fsErr == nil {
		wl, _ = k.fs.Wireless() // no file: no wireless interface
	}
	var pick *procfs.Wireless
	for _, w := range wl {
		if l := byName[w.Name]; l.Up && l.Running {
			pick = w
			break
		}
	}
	if pick == nil && len(wl) > 0 {
		pick = wl[0]
	}
	var wifi Wifi
	if pick == nil {
		return online, wifi
	}
	l := byName[pick.Name]
	wifi.Interface = &pick.Name
	wifi.Connected = l.Up && l.Running
	for _, a := range l.Addrs {
		if v4 := a.To4(); v4 != nil && routable(a) {
			s := v4.String()
			wifi.IPv4 = &s
			break
		}
	}
	if wifi.Connected {
		// The level is in dBm only when negative; drivers that report a
		// relative level leave it unknown.
		if pick.QualityLevel < 0 {
			dbm := pick.QualityLevel
			wifi.SignalDBM = &dbm
		}
		// cfg80211 scales link quality to 0..70 (MuPiBox-NG reads it the same way).
		q := min(max(pick.QualityLink*100/70, 0), 100)
		wifi.QualityPercent = &q
	}
	return online, wifi
}

func routable(ip net.IP) bool {
	return ip.IsGlobalUnicast() // includes private ranges, excludes link-local
}

func hostLinks() ([]Link, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	links := make([]Link, 0, len(ifs))
	for _, i := range ifs {
		l := Link{Name: i.Name, Up: i.Flags&net.FlagUp != 0, Running: i.Flags&net.FlagRunning != 0, Loopback: i.Flags&net.FlagLoopback != 0}
		addrs, err := i.Addrs()
		if err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					l.Addrs = append(l.Addrs, n.IP)
				}
			}
		}
		links = append(links, l)
	}
	return links, nil
}
