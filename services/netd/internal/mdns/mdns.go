// Package mdns makes the box findable on the home network: it is the box's
// one mDNS responder (brutella/dnssd). It answers for <hostname>.local and
// advertises netd's own services (the API and admin page as _http._tcp)
// and those other programs announce through netd's socket (playerd's
// home-automation API as _mupibox._tcp, which Home Assistant browses for).
//
// dnssd joins the multicast group on the interfaces that have an address
// when it starts and announces once. A box whose Wi-Fi comes up later, or
// whose address changes (a new lease, another network), must be announced
// again with the new address, so Advertiser restarts the responder, and
// with it announces every service again, whenever the set of interfaces
// and addresses or the set of services changes.
package mdns

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/brutella/dnssd"
	dnssdlog "github.com/brutella/dnssd/log"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
)

func init() {
	// dnssd prints informational lines to stdout; netd logs itself.
	dnssdlog.Info.Disable()
}

// Service is one advertised service.
type Service = netapi.Service

// MaxAnnounced bounds the services other programs may announce.
const MaxAnnounced = 8

// Advertiser answers for Host and advertises Services and what Announce
// adds. Announce, Withdraw and State are safe for concurrent use, also
// before and without Run.
type Advertiser struct {
	Host string
	// Services are netd's own; Announce cannot replace them.
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

	mu        sync.Mutex
	announced map[string]Service // by type
	addrs     []string           // of the running responder
	wake      chan struct{}
}

// Validate checks names that dnssd would otherwise mangle.
func (a *Advertiser) Validate() error {
	if a.Host == "" || strings.ContainsAny(a.Host, ". ") || len(a.Host) > 63 {
		return fmt.Errorf("mdns host name %q: want one DNS label (no dots or spaces)", a.Host)
	}
	for _, s := range a.Services {
		if err := check(s); err != nil {
			return err
		}
	}
	return nil
}

// serviceType is RFC 6335's service name (1 to 15 letters, digits and
// inner hyphens) under _tcp or _udp.
var serviceType = regexp.MustCompile(`^_[a-z0-9]([a-z0-9-]{0,13}[a-z0-9])?\._(tcp|udp)$`)

// check refuses what dnssd would mangle or a packet could not carry, as
// fault.Invalid.
func check(s Service) error {
	if s.Name == "" || len(s.Name) > 63 || strings.IndexFunc(s.Name, unicode.IsControl) >= 0 {
		return fault.New(fault.Invalid, "mdns service name %q: want 1 to 63 bytes without control characters", s.Name)
	}
	if !serviceType.MatchString(s.Type) {
		return fault.New(fault.Invalid, "mdns service type %q: want _name._tcp or _name._udp (name: 1 to 15 lower-case letters, digits, inner hyphens)", s.Type)
	}
	if s.Port < 1 || s.Port > 65535 {
		return fault.New(fault.Invalid, "mdns service %s port %d: want 1–65535", s.Type, s.Port)
	}
	if len(s.Text) > 16 {
		return fault.New(fault.Invalid, "mdns service %s: at most 16 TXT keys", s.Type)
	}
	for k, v := range s.Text {
		if k == "" || strings.IndexFunc(k, func(r rune) bool { return r < 0x20 || r > 0x7e || r == '=' }) >= 0 {
			return fault.New(fault.Invalid, "mdns service %s: TXT key %q: want printable ASCII without '='", s.Type, k)
		}
		if len(k)+1+len(v) > 255 {
			return fault.New(fault.Invalid, "mdns service %s: TXT %s: key=value longer than 255 bytes", s.Type, k)
		}
	}
	if _, err := dnssd.NewService(dnssd.Config{Name: s.Name, Type: s.Type, Port: s.Port, Text: s.Text}); err != nil {
		return fault.Wrap(fault.Invalid, err, "mdns service "+s.Type)
	}
	return nil
}

// Announce advertises s too, in place of an earlier one of its type; the
// responder announces everything again when this changes anything. The
// same service again changes nothing, so a program may repeat it to make
// sure a restarted netd has it.
func (a *Advertiser) Announce(s Service) error {
	if err := check(s); err != nil {
		return err
	}
	for _, own := range a.Services {
		if own.Type == s.Type {
			return fault.New(fault.Conflict, "netd announces %s itself", s.Type)
		}
	}
	s.Text = maps.Clone(s.Text)
	a.mu.Lock()
	defer a.mu.Unlock()
	old, had := a.announced[s.Type]
	if had && fingerprint(old) == fingerprint(s) {
		return nil
	}
	if !had && len(a.announced) >= MaxAnnounced {
		return fault.New(fault.Conflict, "at most %d services are announced for other programs", MaxAnnounced)
	}
	if a.announced == nil {
		a.announced = map[string]Service{}
	}
	a.announced[s.Type] = s
	a.poke()
	return nil
}

// Withdraw stops advertising the announced service of type typ.
func (a *Advertiser) Withdraw(typ string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.announced[typ]; !ok {
		return fault.New(fault.NotFound, "no service %q is announced", typ)
	}
	delete(a.announced, typ)
	a.poke()
	return nil
}

// State is what is advertised now: the addresses of the running responder
// (none before Run and while the box has none) and every service.
func (a *Advertiser) State() netapi.MDNS {
	a.mu.Lock()
	defer a.mu.Unlock()
	return netapi.MDNS{Enabled: true, Host: a.Host + ".local", Addresses: append([]string{}, a.addrs...), Services: a.services()}
}

// services are netd's own, then the announced ones by type; a.mu held.
func (a *Advertiser) services() []Service {
	out := append([]Service{}, a.Services...)
	for _, typ := range slices.Sorted(maps.Keys(a.announced)) {
		out = append(out, a.announced[typ])
	}
	return out
}

// poke wakes Run to compare again; a.mu held.
func (a *Advertiser) poke() {
	select {
	case a.wakeC() <- struct{}{}:
	default:
	}
}

// wakeC is the channel Run waits on besides its ticker; a.mu held.
func (a *Advertiser) wakeC() chan struct{} {
	if a.wake == nil {
		a.wake = make(chan struct{}, 1)
	}
	return a.wake
}

func fingerprint(s Service) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %d", s.Name, s.Type, s.Port)
	for _, k := range slices.Sorted(maps.Keys(s.Text)) {
		fmt.Fprintf(&b, " %q=%q", k, s.Text[k])
	}
	return b.String()
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
	a.mu.Lock()
	wake := a.wakeC()
	a.mu.Unlock()
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
		a.mu.Lock()
		a.addrs = nil
		a.mu.Unlock()
	}
	defer end()
	t := time.NewTicker(poll)
	defer t.Stop()
	for {
		addrs := a.addresses()
		a.mu.Lock()
		services := a.services()
		a.mu.Unlock()
		fp := strings.Join(addrs, " ")
		for _, s := range services {
			fp += "\n" + fingerprint(s)
		}
		if fp != last {
			end()
			last = fp
			if len(addrs) > 0 {
				rctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				if err := a.start(rctx, services, done, log); err != nil {
					cancel()
					log.Warn("mdns", "err", err)
					last = "" // try again at the next poll
				} else {
					stop, stopped = cancel, done
					a.mu.Lock()
					a.addrs = addrs
					a.mu.Unlock()
					log.Info("mdns: announcing", "host", a.Host+".local", "addresses", addrs, "services", len(services))
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
		case <-wake:
		}
	}
}

func (a *Advertiser) start(ctx context.Context, services []Service, done chan<- struct{}, log *slog.Logger) error {
	r, err := dnssd.NewResponder()
	if err != nil {
		return err
	}
	for _, s := range services {
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
