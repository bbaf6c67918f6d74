//go:build linux

package mdns

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/netd/internal/mdns/mdnstest"
)

// netnsChild marks the test binary run again inside a network namespace
// of its own.
const netnsChild = "STORYBOX_MDNS_NETNS_CHILD"

// TestAnnouncedInNamespace runs the responder on one end of a veth pair in
// a network namespace of its own, never on the machine's network, and
// looks at it from the other end, in a second namespace, as Home Assistant
// would: the box's _mupibox._tcp service, announced for playerd, is
// announced unasked and answered with its TXT record, and so again after
// the box's address changed, with the new address.
func TestAnnouncedInNamespace(t *testing.T) {
	if os.Getenv(netnsChild) != "" {
		announcedInNamespace(t)
		return
	}
	var out bytes.Buffer
	cmd := exec.Command(os.Args[0], "-test.run=^TestAnnouncedInNamespace$", "-test.v", "-test.count=1", "-test.timeout=2m")
	cmd.Env = append(os.Environ(), netnsChild+"=1")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		// No network namespace for us: not root, or a sandbox without
		// them. `make test` requires it, so there this is a failure.
		if os.Getenv("STORYBOX_REQUIRE_NETNS") != "" {
			t.Fatalf("a network namespace: %v", err)
		}
		t.Skipf("no network namespace (%v); STORYBOX_REQUIRE_NETNS=1 makes this a failure", err)
	}
	t.Logf("in the namespace:\n%s", out.String())
	if err != nil {
		t.Fatalf("the test in the namespace failed: %v", err)
	}
}

const (
	testHost = "sbx-ns"
	haType   = "_mupibox._tcp"
)

var (
	haInstance = testHost + "." + haType + ".local."
	hostName   = testHost + ".local."
	boxAddr    = &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 77, 0, 1), Mask: net.CIDRMask(24, 32)}}
	boxAddr2   = &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 77, 0, 9), Mask: net.CIDRMask(24, 32)}}
	cliAddr    = &netlink.Addr{IPNet: &net.IPNet{IP: net.IPv4(10, 77, 0, 2), Mask: net.CIDRMask(24, 32)}}
)

// client is the other end: a socket that asks (legacy unicast) and one
// that hears what is sent to the group.
type client struct {
	ask    *net.UDPConn
	listen *net.UDPConn
	heard  chan *dns.Msg
}

func announcedInNamespace(t *testing.T) {
	box, cli := setupVeth(t)
	announced := make(chan []string, 16)
	a := &Advertiser{
		Host:       testHost,
		Services:   []Service{{Name: testHost, Type: "_http._tcp", Port: 8090, Text: map[string]string{"path": "/"}}},
		Interfaces: []string{box.Attrs().Name},
		Poll:       20 * time.Millisecond,
		Announced: func(addrs []string) {
			select {
			case announced <- addrs:
			default: // only the first start is waited for
			}
		},
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitAnnounced(t, announced, "box0="+boxAddr.IP.String())

	// playerd's announcement, as netd's socket takes it.
	txt := map[string]string{"api_version": "1", "device_id": "box-1234", "transport": "https"}
	if err := a.Announce(Service{Name: testHost, Type: haType, Port: 8443, Text: txt}); err != nil {
		t.Fatal(err)
	}
	cli.hear(t, "the home-automation service announced", boxAddr.IP.String())
	cli.query(t, boxAddr.IP.String(), txt)

	// A new address: a new lease, another network.
	if err := netlink.AddrDel(box, boxAddr); err != nil {
		t.Fatal(err)
	}
	if err := netlink.AddrAdd(box, boxAddr2); err != nil {
		t.Fatal(err)
	}
	cli.hear(t, "the service announced again with the new address", boxAddr2.IP.String())
	cli.query(t, boxAddr2.IP.String(), txt)
	if st := a.State(); !slices.Contains(st.Addresses, "box0="+boxAddr2.IP.String()) || len(st.Services) != 2 {
		t.Errorf("state %+v", st)
	}
}

// setupVeth makes box0 here and its peer cli0 in a second namespace, with
// the client's sockets made there.
func setupVeth(t *testing.T) (netlink.Link, *client) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	here, err := os.Open("/proc/thread-self/ns/net")
	must("this namespace", err)
	defer here.Close()
	must("a second namespace", unix.Unshare(unix.CLONE_NEWNET))
	there, err := os.Open("/proc/thread-self/ns/net")
	must("the second namespace", err)
	defer there.Close()
	must("back", unix.Setns(int(here.Fd()), unix.CLONE_NEWNET))

	must("veth", netlink.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "box0"}, PeerName: "cli0"}))
	box, err := netlink.LinkByName("box0")
	must("box0", err)
	peer, err := netlink.LinkByName("cli0")
	must("cli0", err)
	must("move cli0", netlink.LinkSetNsFd(peer, int(there.Fd())))
	noIPv6("box0")
	must("box0 address", netlink.AddrAdd(box, boxAddr))
	must("box0 up", netlink.LinkSetUp(box))

	must("into the second namespace", unix.Setns(int(there.Fd()), unix.CLONE_NEWNET))
	defer func() { must("back", unix.Setns(int(here.Fd()), unix.CLONE_NEWNET)) }()
	peer, err = netlink.LinkByName("cli0")
	must("cli0 there", err)
	noIPv6("cli0")
	must("cli0 address", netlink.AddrAdd(peer, cliAddr))
	must("cli0 up", netlink.LinkSetUp(peer))
	ifi, err := net.InterfaceByName("cli0")
	must("cli0 interface", err)
	c := &client{heard: make(chan *dns.Msg, 64)}
	c.ask, err = net.ListenUDP("udp4", &net.UDPAddr{IP: cliAddr.IP})
	must("asking socket", err)
	must("asking interface", ipv4.NewPacketConn(c.ask).SetMulticastInterface(ifi))
	c.listen, err = net.ListenUDP("udp4", &net.UDPAddr{Port: mdnstest.Group.Port})
	must("listening socket", err)
	must("join the group", ipv4.NewPacketConn(c.listen).JoinGroup(ifi, mdnstest.Group))
	t.Cleanup(func() { c.ask.Close(); c.listen.Close() })
	go func() {
		buf := make([]byte, 9000)
		for {
			n, _, err := c.listen.ReadFrom(buf)
			if err != nil {
				close(c.heard)
				return
			}
			m := new(dns.Msg)
			if m.Unpack(buf[:n]) == nil && m.Response {
				c.heard <- m
			}
		}
	}()
	return box, c
}

// noIPv6 keeps the link-local IPv6 address, which arrives late and would
// restart the responder once more, off the interface.
func noIPv6(iface string) {
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+iface+"/disable_ipv6", []byte("1"), 0o644)
}

func waitAnnounced(t *testing.T, announced <-chan []string, want string) {
	t.Helper()
	timeout := time.After(30 * time.Second) // bounds a hang only
	for {
		select {
		case addrs := <-announced:
			if slices.Contains(addrs, want) {
				return
			}
		case <-timeout:
			t.Fatalf("the responder never started with %s", want)
		}
	}
}

// hear waits for a response sent to the group, unasked, that carries the
// home-automation service and the box's address addr in one message, as
// an announcement of the service does: older messages (the address before)
// cannot add up to it.
func (c *client) hear(t *testing.T, what, addr string) {
	t.Helper()
	all := mdnstest.NewRecords()
	timeout := time.After(30 * time.Second) // bounds a hang only
	for {
		select {
		case m, ok := <-c.heard:
			if !ok {
				t.Fatalf("%s: the listening socket closed", what)
			}
			all.Add(m)
			r := mdnstest.NewRecords()
			r.Add(m)
			if slices.Contains(r.PTR["_mupibox._tcp.local."], haInstance) && r.TXT[haInstance]["device_id"] != "" && slices.Contains(r.A[hostName], addr) {
				return
			}
		case <-timeout:
			t.Fatalf("%s: not heard; heard %s", what, all)
		}
	}
}

// query asks as a browser would: the instances of the type, then the
// instance's SRV and TXT, the host's address.
func (c *client) query(t *testing.T, addr string, txt map[string]string) {
	t.Helper()
	r, err := mdnstest.Query(c.ask, []dns.Question{
		mdnstest.Question("_mupibox._tcp.local", dns.TypePTR),
		mdnstest.Question(haInstance, dns.TypeSRV),
		mdnstest.Question(haInstance, dns.TypeTXT),
		mdnstest.Question(hostName, dns.TypeA),
	}, 30*time.Second, func(r *mdnstest.Records) bool {
		return slices.Contains(r.A[hostName], addr) && r.SRV[haInstance] != "" && len(r.TXT[haInstance]) > 0 && len(r.PTR["_mupibox._tcp.local."]) > 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.SRV[haInstance] != hostName+":8443" {
		t.Errorf("SRV %s", r.SRV[haInstance])
	}
	for k, v := range txt {
		if r.TXT[haInstance][k] != v {
			t.Errorf("TXT %s=%q, want %q (all: %v)", k, r.TXT[haInstance][k], v, r.TXT[haInstance])
		}
	}
	if got := strings.Join(r.A[hostName], " "); got != addr {
		t.Errorf("%s is %s, want only %s", hostName, got, addr)
	}
}
