// Package netclient talks to netd, the network daemon, over its Unix
// socket: playerd passes the Wi-Fi routes of /api/connectivity/ on to it,
// reads the link for GET /api/system, and has netd, the box's one mDNS
// responder, announce its services. netd's error kinds come back as
// fault kinds, so the API answers with the status netd meant.
package netclient

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// ErrUnavailable wraps every failure to reach netd.
var ErrUnavailable = fault.New(fault.Unavailable, "network service unavailable").Coded("network_unavailable")

// Client is safe for concurrent use.
type Client struct {
	d *daemon.Client
}

// Timeouts: a join waits for the chip and the access point (netd gives up
// after its -join-timeout, 20 s by default) and a scan takes seconds; the
// rest answer at once.
const (
	quick   = 2 * time.Second
	slow    = 28 * time.Second // under playerd's 30 s write timeout
	scanMax = 20 * time.Second
)

// New returns a client for netd's socket.
func New(socket string) *Client {
	return &Client{d: daemon.NewClient(socket, "netd", ErrUnavailable.Msg)}
}

func (c *Client) call(ctx context.Context, timeout time.Duration, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return c.d.Call(ctx, method, path, in, out)
}

// Status is netd's state now.
func (c *Client) Status(ctx context.Context) (netapi.Status, error) {
	var st netapi.Status
	return st, c.call(ctx, quick, http.MethodGet, "/status", nil, &st)
}

// Adapters lists the Wi-Fi adapters.
func (c *Client) Adapters(ctx context.Context) (netapi.Adapters, error) {
	var a netapi.Adapters
	return a, c.call(ctx, quick+scanMax, http.MethodGet, "/adapters", nil, &a)
}

// Scan scans on iface (empty: netd's choice).
func (c *Client) Scan(ctx context.Context, iface string) (netapi.Scan, error) {
	var s netapi.Scan
	path := "/scan"
	if iface != "" {
		path += "?interface=" + url.QueryEscape(iface)
	}
	return s, c.call(ctx, scanMax, http.MethodGet, path, nil, &s)
}

// Connect joins a network and keeps it.
func (c *Client) Connect(ctx context.Context, req netapi.Connect) (netapi.Connected, error) {
	var out netapi.Connected
	return out, c.call(ctx, slow, http.MethodPost, "/connect", req, &out)
}

// Known lists the saved networks.
func (c *Client) Known(ctx context.Context) (netapi.Known, error) {
	var k netapi.Known
	return k, c.call(ctx, quick, http.MethodGet, "/networks", nil, &k)
}

// Forget removes a saved network.
func (c *Client) Forget(ctx context.Context, ssid string) error {
	var out map[string]bool
	return c.call(ctx, slow, http.MethodPost, "/forget", netapi.Forget{SSID: ssid}, &out)
}

// SetCountry sets the regulatory country.
func (c *Client) SetCountry(ctx context.Context, country string) (netapi.Country, error) {
	var out netapi.Country
	return out, c.call(ctx, slow, http.MethodPut, "/country", netapi.Country{Country: country}, &out)
}

// Announce asks netd to announce svc by mDNS on every address the box has,
// in place of an earlier service of its type, until Withdraw or until netd
// restarts (KeepAnnounced repeats it for that).
func (c *Client) Announce(ctx context.Context, svc netapi.Service) error {
	return c.call(ctx, quick, http.MethodPut, "/mdns/services", svc, nil)
}

// Withdraw asks netd to stop announcing the service of type typ.
func (c *Client) Withdraw(ctx context.Context, typ string) error {
	return c.call(ctx, quick, http.MethodDelete, "/mdns/services/"+url.PathEscape(typ), nil, nil)
}

// AnnounceEvery is how often KeepAnnounced repeats an announcement: a netd
// that restarted has forgotten it, and this is how long the service may be
// missing then. Repeating an unchanged one costs netd a map lookup.
const AnnounceEvery = 30 * time.Second

// KeepAnnounced announces svc through netd until ctx ends, then withdraws
// it: at once, again every interval (AnnounceEvery when 0), and while netd
// does not take it (not running yet at boot, restarting, mDNS off) with
// backoff. report hears each change between announced (nil) and not (the
// error), not every attempt.
func (c *Client) KeepAnnounced(ctx context.Context, svc netapi.Service, interval time.Duration, report func(error)) {
	if interval <= 0 {
		interval = AnnounceEvery
	}
	retry := daemon.Backoff{First: min(time.Second, interval), Max: interval}
	var last *string
	for {
		err := c.Announce(ctx, svc)
		if ctx.Err() != nil {
			break
		}
		if msg := fmt.Sprint(err); last == nil || *last != msg {
			last = &msg
			report(err)
		}
		if err != nil {
			if !retry.Wait(ctx) {
				break
			}
			continue
		}
		retry.Reset()
		t := time.NewTimer(interval)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		if ctx.Err() != nil {
			break
		}
	}
	// The service's port closes with playerd: say so at once instead of
	// leaving it announced.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), quick)
	defer cancel()
	_ = c.Withdraw(wctx, svc.Type)
}
