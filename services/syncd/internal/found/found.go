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
	"time"

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

// Round is how long one browse lasts: the boxes seen in it replace those
// of the round before, so a box that left drops out, and a record whose
// TXT keys changed (a box whose household keys became known after its
// first announcement) is read again.
const Round = 30 * time.Second

// Run browses until ctx ends.
func (b *Browser) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		seen, err := b.round(ctx)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			return err
		}
		b.mu.Lock()
		b.boxes = seen
		b.mu.Unlock()
	}
	return nil
}

// round browses for Round and returns the boxes seen; each is also added
// to the list at once.
func (b *Browser) round(ctx context.Context) (map[string]syncapi.FoundBox, error) {
	rctx, cancel := context.WithTimeout(ctx, Round)
	defer cancel()
	var mu sync.Mutex
	seen := map[string]syncapi.FoundBox{}
	keep := func(key string, f syncapi.FoundBox) {
		if f.DeviceID == b.Self {
			return
		}
		mu.Lock()
		seen[key] = f
		mu.Unlock()
		b.mu.Lock()
		if b.boxes == nil {
			b.boxes = map[string]syncapi.FoundBox{}
		}
		b.boxes[key] = f
		b.mu.Unlock()
	}
	var wg sync.WaitGroup
	add := func(e dnssd.BrowseEntry) {
		key := e.ServiceInstanceName()
		if f, ok := Entry(e.Name, e.IPs, e.Text); ok {
			keep(key, f)
			return
		}
		// The TXT record can come in a packet of its own after the
		// entry was reported without it: ask for the instance.
		wg.Add(1)
		go func() {
			defer wg.Done()
			ictx, cancel := context.WithTimeout(rctx, 3*time.Second)
			defer cancel()
			svc, err := dnssd.LookupInstance(ictx, e.EscapedServiceInstanceName())
			if err != nil {
				return
			}
			if f, ok := Entry(e.Name, e.IPs, svc.Text); ok {
				keep(key, f)
			}
		}()
	}
	rmv := func(e dnssd.BrowseEntry) {
		key := e.ServiceInstanceName()
		mu.Lock()
		delete(seen, key)
		mu.Unlock()
		b.mu.Lock()
		delete(b.boxes, key)
		b.mu.Unlock()
	}
	err := dnssd.LookupType(rctx, ServiceType+".local.", add, rmv)
	wg.Wait()
	if rctx.Err() != nil {
		err = nil // the round's end
	}
	mu.Lock()
	defer mu.Unlock()
	return seen, err
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
