// Package stconf writes Syncthing's config.xml for a box of a household.
// syncd writes it anew before every start of Syncthing, from what it keeps
// itself (the boxes, the folders, the API key), so nothing a running
// Syncthing learned on its own (a device that asked to join, an address it
// heard of) survives a restart, and every setting that would make it talk
// to anything beyond the boxes the parents added is off in the file, not
// left to a default.
//
// The element and attribute names are those of Syncthing v1.30.0's
// lib/config (configuration version 37), which syncd is built against.
package stconf

import (
	"encoding/xml"
	"fmt"
	"net"
	"regexp"
	"strconv"
)

// Version is the configuration version Syncthing v1.30.0 writes; with it
// Syncthing neither migrates nor rewrites the file at start.
const Version = 37

// Config is what varies between boxes and over a box's life.
type Config struct {
	// GUI is the loopback HOST:PORT of the REST API; the web GUI itself
	// is not built in (-tags noassets).
	GUI    string
	APIKey string
	// Listen is the TCP port Syncthing listens on for the other boxes.
	Listen int
	// Self is this box's device id and name.
	Self, Name string
	Devices    []Device
	Folders    []Folder
}

// Device is another box.
type Device struct {
	ID, Name string
	// Address is tcp://HOST:PORT or "dynamic".
	Address string
}

// Folder is a shared folder; every device of Config is in every folder.
type Folder struct {
	ID, Label, Path string
}

var deviceID = regexp.MustCompile(`^[A-Z2-7]{7}(-[A-Z2-7]{7}){7}$`)

// CheckDeviceID accepts Syncthing's canonical form of a device id: eight
// groups of seven base32 characters joined by dashes.
func CheckDeviceID(id string) error {
	if !deviceID.MatchString(id) {
		return fmt.Errorf("device id %q: want eight groups of seven letters A-Z and digits 2-7, joined by dashes", id)
	}
	return nil
}

// CheckAddress accepts "dynamic" and tcp://HOST:PORT.
func CheckAddress(a string) error {
	if a == "dynamic" {
		return nil
	}
	rest, ok := cutPrefix(a, "tcp://")
	if !ok {
		return fmt.Errorf("address %q: want tcp://HOST:PORT or dynamic", a)
	}
	host, port, err := net.SplitHostPort(rest)
	if err != nil || host == "" {
		return fmt.Errorf("address %q: want tcp://HOST:PORT", a)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("address %q: port: want 1–65535", a)
	}
	return nil
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// Render is the config.xml for c.
func Render(c Config) ([]byte, error) {
	if err := CheckDeviceID(c.Self); err != nil {
		return nil, fmt.Errorf("this box: %w", err)
	}
	if _, _, err := net.SplitHostPort(c.GUI); err != nil {
		return nil, fmt.Errorf("gui address %q: %w", c.GUI, err)
	}
	if c.APIKey == "" {
		return nil, fmt.Errorf("no API key")
	}
	if c.Listen < 1 || c.Listen > 65535 {
		return nil, fmt.Errorf("listen port %d: want 1–65535", c.Listen)
	}
	doc := configuration{Version: Version}
	devices := []xmlDevice{device(c.Self, c.Name, "dynamic")}
	for _, d := range c.Devices {
		if err := CheckDeviceID(d.ID); err != nil {
			return nil, err
		}
		if err := CheckAddress(d.Address); err != nil {
			return nil, err
		}
		devices = append(devices, device(d.ID, d.Name, d.Address))
	}
	doc.Devices = devices
	for _, f := range c.Folders {
		xf := xmlFolder{
			ID: f.ID, Label: f.Label, Path: f.Path, Type: "sendreceive",
			// The watcher tells of a change within a second; the full
			// rescan is a backstop, once an hour on a box that mostly
			// idles.
			RescanIntervalS: 3600, FSWatcherEnabled: true, FSWatcherDelayS: 1,
			// FAT-formatted media and different umasks must not count
			// as changes.
			IgnorePerms: true, AutoNormalize: true,
			// A box never fills its disk to the last byte with
			// another box's files (a full disk is reported, not
			// caused).
			MinDiskFree: minDiskFree{Unit: "%", Value: 2},
			MarkerName:  ".stfolder",
		}
		for _, d := range devices {
			xf.Devices = append(xf.Devices, folderDevice{ID: d.ID})
		}
		doc.Folders = append(doc.Folders, xf)
	}
	doc.GUI = gui{Enabled: true, Address: c.GUI, APIKey: c.APIKey, Theme: "default"}
	doc.Options = options{
		ListenAddress: []string{"tcp://:" + strconv.Itoa(c.Listen)},
		// Nothing leaves the home network: no global discovery, no
		// relays, no NAT traversal (UPnP, NAT-PMP, STUN), no usage or
		// crash reports, no upgrade checks.
		GlobalAnnounceEnabled: false,
		GlobalAnnounceServer:  []string{},
		RelaysEnabled:         false,
		NATEnabled:            false,
		StunServer:            []string{},
		URAccepted:            -1,
		URSeen:                3,
		URURL:                 "",
		AutoUpgradeIntervalH:  0,
		ReleasesURL:           "",
		CrashReportingEnabled: false,
		CrashReportingURL:     "",
		// Boxes find each other through the box's own mDNS and are
		// added with their address, so Syncthing's local discovery,
		// a broadcast on every interface, is off too.
		LocalAnnounceEnabled: false,
		StartBrowser:         false,
		// Syncthing lowers its own priority too; syncd already
		// started it at nice 19 and idle I/O class.
		SetLowPriority:       true,
		MaxFolderConcurrency: 1,
		MinHomeDiskFree:      minDiskFree{Unit: "%", Value: 1},
		// Devices are added by syncd alone, never learnt.
		OverwriteRemoteDeviceNames: false,
		AnnounceLANAddresses:       false,
		KeepTemporariesH:           24,
		ProgressUpdateIntervalS:    2,
	}
	out, err := xml.MarshalIndent(doc, "", "    ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func device(id, name, addr string) xmlDevice {
	return xmlDevice{ID: id, Name: name, Compression: "metadata", Addresses: []string{addr}}
}

type configuration struct {
	XMLName xml.Name    `xml:"configuration"`
	Version int         `xml:"version,attr"`
	Folders []xmlFolder `xml:"folder"`
	Devices []xmlDevice `xml:"device"`
	GUI     gui         `xml:"gui"`
	Options options     `xml:"options"`
}

type xmlFolder struct {
	ID               string         `xml:"id,attr"`
	Label            string         `xml:"label,attr"`
	Path             string         `xml:"path,attr"`
	Type             string         `xml:"type,attr"`
	RescanIntervalS  int            `xml:"rescanIntervalS,attr"`
	FSWatcherEnabled bool           `xml:"fsWatcherEnabled,attr"`
	FSWatcherDelayS  int            `xml:"fsWatcherDelayS,attr"`
	IgnorePerms      bool           `xml:"ignorePerms,attr"`
	AutoNormalize    bool           `xml:"autoNormalize,attr"`
	Devices          []folderDevice `xml:"device"`
	MinDiskFree      minDiskFree    `xml:"minDiskFree"`
	MarkerName       string         `xml:"markerName"`
}

type folderDevice struct {
	ID string `xml:"id,attr"`
}

type minDiskFree struct {
	Unit  string `xml:"unit,attr"`
	Value int    `xml:",chardata"`
}

type xmlDevice struct {
	ID          string   `xml:"id,attr"`
	Name        string   `xml:"name,attr"`
	Compression string   `xml:"compression,attr"`
	Addresses   []string `xml:"address"`
}

type gui struct {
	Enabled bool   `xml:"enabled,attr"`
	TLS     bool   `xml:"tls,attr"`
	Address string `xml:"address"`
	APIKey  string `xml:"apikey"`
	Theme   string `xml:"theme"`
}

type options struct {
	ListenAddress              []string    `xml:"listenAddress"`
	GlobalAnnounceServer       []string    `xml:"globalAnnounceServer"`
	GlobalAnnounceEnabled      bool        `xml:"globalAnnounceEnabled"`
	LocalAnnounceEnabled       bool        `xml:"localAnnounceEnabled"`
	RelaysEnabled              bool        `xml:"relaysEnabled"`
	StartBrowser               bool        `xml:"startBrowser"`
	NATEnabled                 bool        `xml:"natEnabled"`
	URAccepted                 int         `xml:"urAccepted"`
	URSeen                     int         `xml:"urSeen"`
	URURL                      string      `xml:"urURL"`
	AutoUpgradeIntervalH       int         `xml:"autoUpgradeIntervalH"`
	KeepTemporariesH           int         `xml:"keepTemporariesH"`
	ProgressUpdateIntervalS    int         `xml:"progressUpdateIntervalS"`
	MinHomeDiskFree            minDiskFree `xml:"minHomeDiskFree"`
	ReleasesURL                string      `xml:"releasesURL"`
	OverwriteRemoteDeviceNames bool        `xml:"overwriteRemoteDeviceNamesOnConnect"`
	SetLowPriority             bool        `xml:"setLowPriority"`
	MaxFolderConcurrency       int         `xml:"maxFolderConcurrency"`
	CrashReportingURL          string      `xml:"crashReportingURL"`
	CrashReportingEnabled      bool        `xml:"crashReportingEnabled"`
	StunServer                 []string    `xml:"stunServer"`
	AnnounceLANAddresses       bool        `xml:"announceLANAddresses"`
}
