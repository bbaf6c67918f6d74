// Package ipconf gives the Wi-Fi interface its IP configuration once it is
// associated: it runs a DHCP client program for it (gokrazy's own
// /gokrazy/dhcp on the box, which sets the address, the default route and
// /tmp/resolv.conf, so that gokrazy's ntp can set the clock) and takes the
// addresses away again when the link goes, so a box that moves to another
// network never keeps the old one's address.
package ipconf

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
)

// Addr is an interface's IP configuration now.
type Addr struct {
	CIDRs   []string // every address, IPv6 link-local included
	IPv4    string   // the first routable IPv4 address, or empty
	Gateway string   // the IPv4 default gateway through the interface
}

// DHCP runs one DHCP client process per interface that is up.
type DHCP struct {
	// Program is the client; it is started as Program -interface=IFACE
	// and is expected to keep running while it holds the lease.
	Program string
	// Output receives the client's log lines (netd's stderr on the box).
	Output io.Writer
	Log    *slog.Logger
	// ProcRoute is /proc/net/route, where the gateway is read.
	ProcRoute string
	// RetryMax bounds the wait before a client that exited is started
	// again; default 30 s.
	RetryMax time.Duration

	mu      sync.Mutex
	running map[string]*client
	missing bool // Program was missing; logged once
}

type client struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// Up starts the client for iface unless it runs already.
func (d *DHCP) Up(iface string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.running == nil {
		d.running = map[string]*client{}
	}
	if _, ok := d.running[iface]; ok {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &client{cancel: cancel, done: make(chan struct{})}
	d.running[iface] = c
	go d.keep(ctx, iface, c.done)
}

// keep runs the client, starting it again when it exits (gokrazy's dhcp
// exits when no server answers within seconds), 1 s doubling to RetryMax.
func (d *DHCP) keep(ctx context.Context, iface string, done chan<- struct{}) {
	defer close(done)
	retryMax := d.RetryMax
	if retryMax <= 0 {
		retryMax = 30 * time.Second
	}
	wait := time.Second
	for ctx.Err() == nil {
		start := time.Now()
		err := d.runOnce(ctx, iface)
		if ctx.Err() != nil {
			return
		}
		if time.Since(start) > time.Minute {
			wait = time.Second // it held a lease for a while: a fresh failure
		}
		if d.Log != nil {
			d.Log.Warn("DHCP client ended, starting it again", "interface", iface, "err", err, "in", wait)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(2*wait, retryMax)
	}
}

func (d *DHCP) runOnce(ctx context.Context, iface string) error {
	if _, err := os.Stat(d.Program); err != nil {
		d.mu.Lock()
		first := !d.missing
		d.missing = true
		d.mu.Unlock()
		if first && d.Log != nil {
			d.Log.Error("no DHCP client; the Wi-Fi interface gets no address", "program", d.Program)
		}
		return err
	}
	cmd := exec.CommandContext(ctx, d.Program, "-interface="+iface)
	cmd.Stdout, cmd.Stderr = d.Output, d.Output
	cmd.WaitDelay = 2 * time.Second
	return cmd.Run()
}

// Down stops the client for iface and removes the interface's IPv4
// addresses (and with them the routes through it).
func (d *DHCP) Down(iface string) error {
	d.stop(iface)
	return Flush(iface)
}

// stop ends iface's client; once it returns, none runs for iface.
func (d *DHCP) stop(iface string) {
	d.mu.Lock()
	c := d.running[iface]
	delete(d.running, iface)
	d.mu.Unlock()
	if c != nil {
		c.cancel()
		<-c.done
	}
}

// Close stops every client; the addresses stay (netd is stopping, maybe
// for an update, and the box should stay reachable until it is back).
func (d *DHCP) Close() {
	d.mu.Lock()
	cs := d.running
	d.running = nil
	d.mu.Unlock()
	for _, c := range cs {
		c.cancel()
		<-c.done
	}
}

// Flush removes every IPv4 address of iface.
func Flush(iface string) error {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return fmt.Errorf("flush %s: %w", iface, err)
	}
	addrs, err := netlink.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("flush %s: %w", iface, err)
	}
	var errs []error
	for _, a := range addrs {
		if err := netlink.AddrDel(l, &a); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("flush %s: %w", iface, err)
	}
	return nil
}

// Addrs reads iface's configuration now.
func (d *DHCP) Addrs(iface string) Addr {
	return Read(iface, d.ProcRoute)
}

// Read reads iface's addresses and its IPv4 default gateway from procRoute
// (/proc/net/route).
func Read(iface, procRoute string) Addr {
	var a Addr
	ni, err := net.InterfaceByName(iface)
	if err != nil {
		return a
	}
	addrs, _ := ni.Addrs()
	for _, ad := range addrs {
		n, ok := ad.(*net.IPNet)
		if !ok {
			continue
		}
		a.CIDRs = append(a.CIDRs, n.String())
		if v4 := n.IP.To4(); v4 != nil && a.IPv4 == "" && n.IP.IsGlobalUnicast() {
			a.IPv4 = v4.String()
		}
	}
	if procRoute == "" {
		procRoute = "/proc/net/route"
	}
	if f, err := os.Open(procRoute); err == nil {
		a.Gateway = gateway(f, iface)
		f.Close()
	}
	return a
}

// gateway finds the default route through iface in /proc/net/route, whose
// addresses are hex in the machine's byte order.
func gateway(r io.Reader, iface string) string {
	sc := bufio.NewScanner(r)
	best, bestMetric := "", -1
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 || f[0] != iface || f[1] != "00000000" || f[7] != "00000000" {
			continue // not a default route through iface
		}
		v, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil {
			continue
		}
		metric, _ := strconv.Atoi(f[6])
		if best != "" && metric >= bestMetric {
			continue
		}
		// The kernel printed the address's bytes read as a host-order
		// number: writing it back in host order restores them.
		ip := make(net.IP, 4)
		binary.NativeEndian.PutUint32(ip, uint32(v))
		best, bestMetric = ip.String(), metric
	}
	return best
}
