// Package mdns makes the box findable by name on the home network: it
// answers for <hostname>.local and advertises its services (the API and
// admin page as _http._tcp) with multicast DNS (brutella/dnssd).
//
// dnssd joins the multicast group on the interfaces that have an address
// when it starts and announces once. A box whose Wi-Fi comes up later, or
// whose address changes (a new lease, another network), must be announced
// again with the new address, so Advertiser restarts the responder whenever
// the set of interfaces and addresses changes.
package mdns

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/brutella/dnssd"
	dnssdlog "github.com/brutella/dnssd/log"
)

func init() {
	// dnssd prints informational lines to stdout; netd logs itself.
	dnssdlog.Info.Disable()
}

// Service is one advertised service.
type Service struct {
	Name string // instance name shown to people, e.g. "storybox"
	Type string // e.g. "_http._tcp"
	Port int
	Text map[string]string
}

// Advertiser answers for Host and advertises Services.
type Advertiser struct {
	Host     string
	Services []Service
	// Poll is how often the addresses are compared; default 2 s.
	Poll time.Duration
	// Interfaces limits the advertisement to these names; empty: all
	// multicast interfaces with an address (loopback excluded).
	Interfaces []string
	Log        *slog.Logger
	// Announced, when set, is called after each (re)start with the
	// addresses announced; tests wait on it.
	Announced func(addrs []string)
}

// Validate checks names that dnssd would otherwise mangle.
func (a *Advertiser) Validate() error {
	if a.Host == "" || strings.ContainsAny(a.Host, ". ") || len(a.Host) > 63 {
		return fmt.Errorf("mdns host name %q: want one DNS label (no dots or spaces)", a.Host)
	}
	for _, s := range a.Services {
		if _, err := dnssd.NewService(dnssd.Config{Name: s.Name, Type: s.Type, Host: a.Host, Port: s.Port}); err != nil {
			return fmt.Errorf("mdns service %q: %w", s.Name, err)
		}
	}
	return nil
}

// Run advertises until ctx ends; on the way out the responder sends
// goodbye packets, so other devices forget the box at once.
func (a *Advertiser) Run(ctx context.Context) error {
	if err := a.Validate(); err != nil {
		return err
	}
	log := a.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	poll := a.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	var (
		last    string
		stop    context.CancelFunc
		stopped chan struct{}
	)
	end := func() {
		if stop != nil {
			stop()
			<-stopped
			stop = nil
		}
	}
	defer end()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		addrs := a.addresses()
		if fp := strings.Join(addrs, " "); fp != last {
			end()
			last = fp
			if len(addrs) > 0 {
				rctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				if err := a.start(rctx, done, log); err != nil {
					cancel()
					log.Warn("mdns", "err", err)
					last = "" // try again at the next poll
				} else {
					stop, stopped = cancel, done
					log.Info("mdns: announcing", "host", a.Host+".local", "addresses", addrs)
					if a.Announced != nil {
						a.Announced(addrs)
					}
				}
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (a *Advertiser) start(ctx context.Context, done chan<- struct{}, log *slog.Logger) error {
	r, err := dnssd.NewResponder()
	if err != nil {
		return err
	}
	for _, s := range a.Services {
		svc, err := dnssd.NewService(dnssd.Config{Name: s.Name, Type: s.Type, Host: a.Host, Port: s.Port, Text: s.Text, Ifaces: a.Interfaces})
		if err != nil {
			return err
		}
		if _, err := r.Add(svc); err != nil {
			return err
		}
	}
	go func() {
		defer close(done)
		if err := r.Respond(ctx); err != nil && ctx.Err() == nil {
			log.Warn("mdns responder", "err", err)
		}
	}()
	return nil
}

// addresses lists "iface=addr" for every address that would be announced,
// sorted, as the fingerprint of what the network looks like.
func (a *Advertiser) addresses() []string {
	var out []string
	for _, ifi := range dnssd.MulticastInterfaces(a.Interfaces...) {
		if ifi.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := ifi.Addrs()
		if err != nil {
			continue
		}
		for _, ad := range addrs {
			if n, ok := ad.(*net.IPNet); ok {
				out = append(out, ifi.Name+"="+n.IP.String())
			}
		}
	}
	slices.Sort(out)
	return out
}
