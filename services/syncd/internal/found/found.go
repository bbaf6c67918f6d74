// Package found lists the boxes on the home network: every box's netd
// announces playerd's _mupibox._tcp service by mDNS, and a box that can
// join a household adds its Syncthing device id and port to that record
// (syncapi.TXTDeviceID, TXTPort). Browser listens for those records
// (brutella/dnssd, as netd's responder) and keeps the boxes that carry
// both keys.
package found

import (
	"context"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/brutella/dnssd"

	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/syncd/internal/stconf"
)

// ServiceType is the record browsed for (playerd's hav1.ServiceType).
const ServiceType = "_mupibox._tcp"

// Browser keeps the boxes seen. Safe for concurrent use.
type Browser struct {
	// Self is this box's device id, left out of the list.
	Self string

	mu    sync.Mutex
	boxes map[string]syncapi.FoundBox // by instance name
}

// Boxes are the boxes seen now, by name.
func (b *Browser) Boxes() []syncapi.FoundBox {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := []syncapi.FoundBox{}
	for _, f := range b.boxes {
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b syncapi.FoundBox) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Run browses until ctx ends.
func (b *Browser) Run(ctx context.Context) error {
	add := func(e dnssd.BrowseEntry) {
		f, ok := Entry(e.Name, e.IPs, e.Text)
		if !ok || f.DeviceID == b.Self {
			return
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.boxes == nil {
			b.boxes = map[string]syncapi.FoundBox{}
		}
		b.boxes[e.ServiceInstanceName()] = f
	}
	rmv := func(e dnssd.BrowseEntry) {
		b.mu.Lock()
		defer b.mu.Unlock()
		delete(b.boxes, e.ServiceInstanceName())
	}
	err := dnssd.LookupType(ctx, ServiceType+".local.", add, rmv)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// Entry reads one record: the box's name, its first IPv4 address and the
// household keys; ok is false for a box that cannot join a household.
func Entry(name string, ips []net.IP, text map[string]string) (syncapi.FoundBox, bool) {
	id := text[syncapi.TXTDeviceID]
	port, err := strconv.Atoi(text[syncapi.TXTPort])
	api, err2 := strconv.Atoi(text[syncapi.TXTAPIPort])
	if stconf.CheckDeviceID(id) != nil || err != nil || err2 != nil || port < 1 || port > 65535 || api < 1 || api > 65535 {
		return syncapi.FoundBox{}, false
	}
	var ip net.IP
	for _, a := range ips {
		if a4 := a.To4(); a4 != nil {
			ip = a4
			break
		}
	}
	if ip == nil {
		return syncapi.FoundBox{}, false
	}
	return syncapi.FoundBox{Name: name, DeviceID: id, Address: "tcp://" + net.JoinHostPort(ip.String(), strconv.Itoa(port)), APIPort: api}, true
}
