// Package netclient talks to netd, the network daemon, over its Unix
// socket: playerd passes the Wi-Fi routes of /api/connectivity/ on to it
// and reads the link for GET /api/system. netd's error kinds come back as
// fault kinds, so the API answers with the status netd meant.
package netclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

// ErrUnavailable wraps every failure to reach netd.
var ErrUnavailable = fault.New(fault.Unavailable, "network service unavailable")

// Client is safe for concurrent use.
type Client struct {
	http *http.Client
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
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", socket)
		},
		MaxIdleConns:    2,
		IdleConnTimeout: 30 * time.Second,
	}
	return &Client{http: &http.Client{Transport: tr}}
}

func (c *Client) call(ctx context.Context, timeout time.Duration, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://netd"+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, ErrUnavailable.Msg)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fault.Wrap(fault.Unavailable, err, ErrUnavailable.Msg)
	}
	if resp.StatusCode != http.StatusOK {
		var e netapi.Error
		if json.Unmarshal(data, &e) != nil || e.Error == "" {
			return fault.Wrap(fault.Unavailable, fmt.Errorf("netd answered %s", resp.Status), ErrUnavailable.Msg)
		}
		return &fault.Error{Kind: kind(e.Kind), Msg: e.Error}
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("netd sent invalid JSON: %w", err), ErrUnavailable.Msg)
	}
	return nil
}

// kind keeps the kinds the API knows; anything else is netd failing.
func kind(k string) fault.Kind {
	switch kk := fault.Kind(k); kk {
	case fault.Invalid, fault.NotFound, fault.Conflict, fault.Unavailable, fault.Upstream, fault.Busy, fault.Unsupported, fault.TooLarge:
		return kk
	}
	return fault.Internal
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
