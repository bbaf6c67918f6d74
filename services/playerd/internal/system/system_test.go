package system

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const wirelessHeader = "Inter-| sta-|   Quality        |   Discarded packets               | Missed | WE\n" +
	" face | tus | link level noise |  nwid  crypt   frag  retry   misc | beacon | 22\n"

func procWith(t *testing.T, wireless string) string {
	t.Helper()
	root := t.TempDir()
	if wireless != "" {
		if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "net", "wireless"), []byte(wireless), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func ips(s ...string) []net.IP {
	var out []net.IP
	for _, a := range s {
		out = append(out, net.ParseIP(a))
	}
	return out
}

func ptr[T any](v T) *T { return &v }

func TestKernelNetwork(t *testing.T) {
	lo := Link{Name: "lo", Up: true, Running: true, Loopback: true, Addrs: ips("127.0.0.1", "::1")}
	for _, tc := range []struct {
		name     string
		wireless string
		links    []Link
		online   bool
		wifi     Wifi
	}{
		{
			name:     "associated",
			wireless: wirelessHeader + " wlan0: 0000   51.  -59.  -256        0      0      0      0     12        0\n",
			links: []Link{lo, {Name: "eth0", Up: false},
				{Name: "wlan0", Up: true, Running: true, Addrs: ips("fe80::1", "192.168.1.23")}},
			online: true,
			wifi:   Wifi{Connected: true, Interface: ptr("wlan0"), SignalDBM: ptr(-59), QualityPercent: ptr(72), IPv4: ptr("192.168.1.23")},
		},
		{
			name:     "wifi down, cable up",
			wireless: wirelessHeader + " wlan0: 0000    0.    0.     0        0      0      0      0      0        0\n",
			links:    []Link{lo, {Name: "eth0", Up: true, Running: true, Addrs: ips("10.0.0.5")}, {Name: "wlan0", Up: true}},
			online:   true,
			wifi:     Wifi{Interface: ptr("wlan0")},
		},
		{
			name:   "no wireless, only link-local",
			links:  []Link{lo, {Name: "eth0", Up: true, Running: true, Addrs: ips("fe80::2", "169.254.3.4")}},
			online: false,
		},
		{
			name: "second adapter associated",
			wireless: wirelessHeader + " wlan0: 0000    0.    0.     0        0      0      0      0      0        0\n" +
				" wlan1: 0000   70.  -40.  -256        0      0      0      0      0        0\n",
			links:  []Link{lo, {Name: "wlan0", Up: true}, {Name: "wlan1", Up: true, Running: true, Addrs: ips("2001:db8::7")}},
			online: true,
			wifi:   Wifi{Connected: true, Interface: ptr("wlan1"), SignalDBM: ptr(-40), QualityPercent: ptr(100)},
		},
		{
			name:     "relative level",
			wireless: wirelessHeader + " wlan0: 0000   35.   60.     0        0      0      0      0      0        0\n",
			links:    []Link{{Name: "wlan0", Up: true, Running: true, Addrs: ips("192.168.1.9")}},
			online:   true,
			wifi:     Wifi{Connected: true, Interface: ptr("wlan0"), QualityPercent: ptr(50), IPv4: ptr("192.168.1.9")},
		},
		{
			name:     "unreadable wireless file",
			wireless: wirelessHeader + " wlan0 0000 garbage\n",
			links:    []Link{{Name: "wlan0", Up: true, Running: true, Addrs: ips("192.168.1.9")}},
			online:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newKernel(procWith(t, tc.wireless), func() ([]Link, error) { return tc.links, nil })
			online, wifi := k.Network()
			if online != tc.online || !reflect.DeepEqual(wifi, tc.wifi) {
				got, _ := json.Marshal(wifi)
				want, _ := json.Marshal(tc.wifi)
				t.Errorf("online %v wifi %s, want %v %s", online, got, tc.online, want)
			}
		})
	}
}

// The body keeps the real box's shape: every key present, unknowns null.
func TestReadShape(t *testing.T) {
	r := Reader{Net: newKernel(procWith(t, ""), func() ([]Link, error) { return nil, nil })}
	b, err := json.Marshal(r.Read())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"online":false,"wifi":{"connected":false,"interface":null,"signal_dbm":null,"quality_percent":null,"ipv4":null},"battery":{"available":false,"percent":null,"charging":false}}`
	if string(b) != want {
		t.Errorf("%s\nwant %s", b, want)
	}
	r.Battery = func() Battery { return Battery{Available: true, Percent: ptr(83), Charging: true} }
	if s := r.Read(); !s.Battery.Available || *s.Battery.Percent != 83 || !s.Battery.Charging {
		t.Errorf("battery %+v", s.Battery)
	}
}

// The host's own interfaces can be read (loopback at least is there).
func TestHostLinks(t *testing.T) {
	links, err := hostLinks()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		if l.Loopback && l.Up && len(l.Addrs) > 0 {
			return
		}
	}
	t.Errorf("no loopback interface with an address among %+v", links)
}
