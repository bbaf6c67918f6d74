package found

import (
	"net"
	"testing"

	"github.com/storybox/storybox/services/internal/syncapi"
)

const id = "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA"

// A record is a box that can join when it carries the household keys and
// an IPv4 address; anything else is not listed.
func TestEntry(t *testing.T) {
	ips := []net.IP{net.ParseIP("fe80::1"), net.ParseIP("192.168.1.7")}
	txt := map[string]string{syncapi.TXTDeviceID: id, syncapi.TXTPort: "22000", syncapi.TXTAPIPort: "8090", "product": "mupibox"}
	f, ok := Entry("kinderzimmer", ips, txt)
	if !ok || f != (syncapi.FoundBox{Name: "kinderzimmer", DeviceID: id, Address: "tcp://192.168.1.7:22000", APIPort: 8090}) {
		t.Fatalf("%+v %v", f, ok)
	}
	for name, edit := range map[string]func(map[string]string){
		"no id":       func(m map[string]string) { delete(m, syncapi.TXTDeviceID) },
		"bad id":      func(m map[string]string) { m[syncapi.TXTDeviceID] = "x" },
		"no port":     func(m map[string]string) { delete(m, syncapi.TXTPort) },
		"bad port":    func(m map[string]string) { m[syncapi.TXTPort] = "70000" },
		"no api port": func(m map[string]string) { delete(m, syncapi.TXTAPIPort) },
	} {
		m := map[string]string{}
		for k, v := range txt {
			m[k] = v
		}
		edit(m)
		if _, ok := Entry("x", ips, m); ok {
			t.Errorf("%s: listed", name)
		}
	}
	if _, ok := Entry("x", ips[:1], txt); ok {
		t.Error("listed without an IPv4 address")
	}
}
