//go:build linux

package radio

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/mdlayher/wifi"
	"golang.org/x/sys/unix"
)

var errBusy = syscall.EBUSY

// NL80211 is the Radio of the kernel's nl80211 interface.
type NL80211 struct {
	// mu serialises requests: one netlink socket, and nl80211 answers
	// in order.
	mu sync.Mutex
	c  *wifi.Client
	// sysfs is /sys, where an interface's driver is found.
	sysfs string
}

// OpenNL80211 connects to nl80211. It fails when the kernel has no Wi-Fi support
// at all (cfg80211 missing).
func OpenNL80211() (*NL80211, error) {
	c, err := wifi.New()
	if err != nil {
		return nil, fmt.Errorf("nl80211: %w", err)
	}
	return &NL80211{c: c, sysfs: "/sys"}, nil
}

// Close releases the netlink socket.
func (r *NL80211) Close() error { return r.c.Close() }

func (r *NL80211) iface(name string) (*wifi.Interface, error) {
	ifs, err := r.c.Interfaces()
	if err != nil {
		return nil, err
	}
	for _, i := range ifs {
		if i.Name == name {
			return i, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", ErrNoAdapter, name)
}

// Adapters lists the Wi-Fi interfaces with their driver and capabilities.
func (r *NL80211) Adapters() ([]Adapter, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ifs, err := r.c.Interfaces()
	if err != nil {
		return nil, err
	}
	phys, err := r.c.PHYs()
	if err != nil {
		return nil, err
	}
	offload := map[int]bool{}
	for _, p := range phys {
		offload[p.Index] = extFeature(p.Extra[unix.NL80211_ATTR_EXT_FEATURES], unix.NL80211_EXT_FEATURE_4WAY_HANDSHAKE_STA_PSK)
	}
	var out []Adapter
	for _, i := range ifs {
		if i.Name == "" {
			continue // a P2P device without a netdev
		}
		a := Adapter{Name: i.Name, MAC: i.HardwareAddr, Station: i.Type == wifi.InterfaceTypeStation, PSKOffload: offload[i.PHY]}
		if link, err := os.Readlink(filepath.Join(r.sysfs, "class/net", i.Name, "device/driver")); err == nil {
			a.Driver = filepath.Base(link)
		}
		if ni, err := net.InterfaceByName(i.Name); err == nil {
			a.Up = ni.Flags&net.FlagUp != 0
		}
		out = append(out, a)
	}
	return out, nil
}

func extFeature(features []byte, bit uint) bool {
	return bit/8 < uint(len(features)) && features[bit/8]&(1<<(bit%8)) != 0
}

// Up sets the interface up through the classic ioctl (no rtnetlink needed).
func (r *NL80211) Up(name string) error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: flags: %w", name, err)
	}
	flags := ifr.Uint16()
	if flags&unix.IFF_UP != 0 {
		return nil
	}
	ifr.SetUint16(flags | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("%s: set up: %w", name, err)
	}
	return nil
}

// staleMargin is how much older than the scan itself an entry may be and
// still count as seen by it (the kernel keeps ages in jiffies).
const staleMargin = time.Second

// Scan triggers a scan and reads its results: the access points this scan
// saw. cfg80211 keeps an access point that went away in its list for 30 s
// more; listing it (and trying to join it after a router reboot, only to
// wait out the join timeout) would be wrong, so entries older than the
// scan are left out.
func (r *NL80211) Scan(ctx context.Context, name string) ([]BSS, error) {
	ifi, err := r.lockedIface(name)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	// Not under mu: a scan takes seconds and uses its own socket, and
	// the link must stay readable meanwhile.
	if err := r.c.Scan(ctx, ifi); err != nil {
		return nil, fmt.Errorf("scan on %s: %w", name, err)
	}
	r.mu.Lock()
	aps, err := r.c.AccessPoints(ifi)
	r.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("scan results on %s: %w", name, err)
	}
	return seen(aps, time.Since(start)+staleMargin), nil
}

// seen lists the named access points no older than maxAge.
func seen(aps []*wifi.BSS, maxAge time.Duration) []BSS {
	out := make([]BSS, 0, len(aps))
	for _, ap := range aps {
		if ap.SSID == "" {
			continue // hidden: joinable by name, but nothing to list
		}
		if ap.LastSeen > maxAge {
			continue // not seen by this scan: gone
		}
		out = append(out, BSS{
			SSID: ap.SSID, BSSID: ap.BSSID, SignalDBM: int(ap.Signal / 100), FrequencyMHz: ap.Frequency,
			Security: security(ap.RSN), LastSeen: ap.LastSeen,
		})
	}
	return out
}

func (r *NL80211) lockedIface(name string) (*wifi.Interface, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.iface(name)
}

// security reads the RSN element. A network without one is listed as
// open; a WEP or WPA1-only network (no RSN element either) looks the same
// and then fails to join.
func security(rsn wifi.RSNInfo) Security {
	if !rsn.IsInitialized() {
		return Open
	}
	var psk, sae, eap bool
	for _, a := range rsn.AKMs {
		switch a {
		case wifi.RSNAkmPSK, wifi.RSNAkmFTPSK, wifi.RSNAkmPSKSHA256:
			psk = true
		case wifi.RSNAkmSAE, wifi.RSNAkmFTSAE:
			sae = true
		case wifi.RSNAkm8021X, wifi.RSNAkmFT8021X, wifi.RSNAkm8021XSHA256, wifi.RSNAkm8021XSuiteB, wifi.RSNAkm8021XCNSA:
			eap = true
		}
	}
	switch {
	case psk && sae:
		return WPA2WPA3
	case psk:
		return WPA2
	case sae:
		return WPA3
	case eap:
		return Enterprise
	}
	return Enterprise // an AKM netd does not know: not joinable
}

// Join sends the connect request; the chip does the rest (and, with a
// passphrase, the WPA2 handshake).
func (r *NL80211) Join(name, ssid, psk string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ifi, err := r.iface(name)
	if err != nil {
		return err
	}
	if psk == "" {
		err = r.c.Connect(ifi, ssid)
	} else {
		err = r.c.ConnectWPAPSK(ifi, ssid, psk)
		if errors.Is(err, wifi.ErrNotSupported) {
			return ErrNoOffload
		}
	}
	if err != nil {
		return fmt.Errorf("connect %s to %q: %w", name, ssid, err)
	}
	return nil
}

// Leave disconnects; not being connected is not an error.
func (r *NL80211) Leave(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	ifi, err := r.iface(name)
	if err != nil {
		return err
	}
	if err := r.c.Disconnect(ifi); err != nil && !errors.Is(err, unix.ENOTCONN) {
		return fmt.Errorf("disconnect %s: %w", name, err)
	}
	return nil
}

// Link reads the associated BSS and the station's signal.
func (r *NL80211) Link(name string) (Link, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ifi, err := r.iface(name)
	if err != nil {
		return Link{}, err
	}
	bss, err := r.c.BSS(ifi)
	if errors.Is(err, os.ErrNotExist) {
		return Link{}, nil
	}
	if err != nil {
		return Link{}, fmt.Errorf("link of %s: %w", name, err)
	}
	if bss.Status != wifi.BSSStatusAssociated {
		return Link{}, nil
	}
	l := Link{Associated: true, SSID: bss.SSID, BSSID: bss.BSSID, SignalDBM: int(bss.Signal / 100), FrequencyMHz: bss.Frequency}
	if st, err := r.c.StationInfo(ifi); err == nil && len(st) > 0 {
		// The link's own signal, averaged where the driver keeps one.
		if st[0].SignalAverage != 0 {
			l.SignalDBM = st[0].SignalAverage
		} else if st[0].Signal != 0 {
			l.SignalDBM = st[0].Signal
		}
	}
	return l, nil
}

// SetCountry reloads the regulatory database (cfg80211 is built into the
// Pi kernel and looked for it before the root file system was there) and
// sets the country.
func (r *NL80211) SetCountry(code string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	_ = r.c.ReloadRegulatoryDatabase() // older kernels lack it; the request below still counts
	if err := r.c.SetRegulatoryRegion(code, wifi.RegulatoryHintUser); err != nil {
		return fmt.Errorf("set regulatory country %s: %w", code, err)
	}
	return nil
}

// Country is the regulatory country in force ("00": the world domain).
func (r *NL80211) Country() (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, err := r.c.GetRegulatoryDomain()
	if err != nil {
		return "", err
	}
	return d.Region, nil
}
