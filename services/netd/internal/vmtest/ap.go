//go:build linux

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/miekg/dns"
	"github.com/vishvananda/netlink"
	"golang.org/x/net/ipv4"

	"github.com/storybox/storybox/services/netd/internal/mdns/mdnstest"
)

// The test network.
const (
	openSSID   = "storybox-open"
	wpa2SSID   = "storybox-wpa2"
	wpa2Pass   = "storybox-secret"
	apCtrlDir  = "/run/hostapd"
	apConfPath = "/tmp/hostapd.conf"
)

var (
	apAddr   = net.IPv4(10, 42, 0, 1)
	apPrefix = net.CIDRMask(24, 32)
)

func apLog(format string, a ...any) { fmt.Fprintf(os.Stderr, "ap: "+format+"\n", a...) }

// apMain is the access point's side, run as "/init ap" in a network
// namespace of its own, to which the main side moves the second radio: the
// station (netd) and the access point then only meet over the air. It runs
// hostapd and the DHCP server there, and takes one command a line on stdin
// (stop, start, renumber, mdns NAME, quit), answering "ok ..." or "fail ..." on stdout.
func apMain() int {
	out := bufio.NewWriter(os.Stdout)
	answer := func(format string, a ...any) {
		fmt.Fprintf(out, format+"\n", a...)
		out.Flush()
	}
	ifi, err := apSetup()
	if err != nil {
		answer("fail %v", err)
		return 1
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	d := &dhcpd{Server: apAddr, Mask: apPrefix, First: net.IPv4(10, 42, 0, 100), Lease: time.Hour}
	go func() {
		if err := d.serve(ctx, ifi.Name, apLog); err != nil {
			apLog("%v", err)
		}
	}()
	h := &hostapd{iface: ifi.Name}
	if err := os.WriteFile(apConfPath, []byte(hostapdConf(ifi)), 0o600); err != nil {
		answer("fail %v", err)
		return 1
	}
	if err := h.start(); err != nil {
		answer("fail %v", err)
		return 1
	}
	answer("ok %s", ifi.Name)
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		var res string
		began := time.Now()
		switch cmd {
		case "stop":
			err = h.stop()
		case "start":
			err = h.start()
		case "renumber":
			d.renumber()
		case "mdns":
			res, err = queryMDNS(ifi, arg, 30*time.Second)
		case "quit":
			if err := h.stop(); err != nil {
				answer("fail %v", err)
				return 1
			}
			answer("ok")
			return 0
		default:
			err = fmt.Errorf("unknown command %q", cmd)
		}
		apLog("%s took %.1fs", cmd, time.Since(began).Seconds())
		if err != nil {
			answer("fail %v", err)
		} else {
			answer("ok %s", res)
		}
	}
	_ = h.stop()
	return 0
}

// apSetup waits for the radio to arrive in this namespace and gives it the
// network's first address.
func apSetup() (*net.Interface, error) {
	var ifi *net.Interface
	for deadline := time.Now().Add(30 * time.Second); ifi == nil; {
		ifs, err := net.Interfaces()
		if err != nil {
			return nil, err
		}
		for i := range ifs {
			if strings.HasPrefix(ifs[i].Name, "wlan") {
				ifi = &ifs[i]
			}
		}
		if ifi == nil {
			if time.Now().After(deadline) {
				return nil, errors.New("no radio arrived in the access point's namespace")
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return nil, err
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return nil, err
	}
	l, err := netlink.LinkByName(ifi.Name)
	if err != nil {
		return nil, err
	}
	if err := netlink.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: apAddr, Mask: apPrefix}}); err != nil {
		return nil, fmt.Errorf("address of %s: %w", ifi.Name, err)
	}
	return ifi, nil
}

// hostapdConf is an open network and, on a second BSS of the same radio,
// a WPA2-Personal one, which netd must list as such and refuse to join
// through a radio without handshake offload.
func hostapdConf(ifi *net.Interface) string {
	bssid := append(net.HardwareAddr(nil), ifi.HardwareAddr...)
	bssid[5] |= 1
	return fmt.Sprintf(`interface=%s
driver=nl80211
ctrl_interface=%s
ssid=%s
hw_mode=g
channel=6

bss=%s-1
bssid=%s
ctrl_interface=%s
ssid=%s
wpa=2
wpa_key_mgmt=WPA-PSK
rsn_pairwise=CCMP
wpa_passphrase=%s
`, ifi.Name, apCtrlDir, openSSID, ifi.Name, bssid, apCtrlDir, wpa2SSID, wpa2Pass)
}

// hostapd is Debian's hostapd with its libraries, run through the dynamic
// loader run.sh put into the initramfs.
type hostapd struct {
	iface string
	cmd   *exec.Cmd
	done  chan error
}

func (h *hostapd) start() error {
	if h.cmd != nil {
		return errors.New("hostapd runs already")
	}
	cmd := exec.Command("/hostapd/ld.so", "--library-path", "/hostapd/lib", "/hostapd/hostapd", apConfPath)
	// The console is a terminal, so hostapd's output arrives line by line.
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("hostapd: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	h.cmd, h.done = cmd, done
	for deadline := time.Now().Add(60 * time.Second); ; {
		st, err := hostapdStatus(h.iface)
		if err == nil && strings.Contains(st, "state=ENABLED") && strings.Contains(st, "bss[1]=") {
			return nil
		}
		select {
		case err := <-done:
			h.cmd = nil
			return fmt.Errorf("hostapd ended: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = h.stop()
			return fmt.Errorf("hostapd did not enable the access point: %q %v", st, err)
		}
	}
}

// stop ends hostapd the way a router switched off would not: it says
// goodbye (deauthenticates the station) first. The station notices
// either way; this way the test need not wait out beacon loss.
func (h *hostapd) stop() error {
	if h.cmd == nil {
		return nil
	}
	defer func() { h.cmd = nil }()
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-h.done:
		return nil
	case <-time.After(10 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
		return errors.New("hostapd ignored SIGTERM")
	}
}

// hostapdStatus asks hostapd's control socket for STATUS.
func hostapdStatus(iface string) (string, error) {
	local := fmt.Sprintf("/tmp/vmtest-ctrl-%d", os.Getpid())
	_ = os.Remove(local)
	c, err := net.DialUnix("unixgram", &net.UnixAddr{Name: local, Net: "unixgram"},
		&net.UnixAddr{Name: apCtrlDir + "/" + iface, Net: "unixgram"})
	if err != nil {
		return "", err
	}
	defer os.Remove(local)
	defer c.Close()
	if _, err := c.Write([]byte("STATUS")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	n, err := c.Read(buf)
	return string(buf[:n]), err
}

// queryMDNS asks over the radio for NAME.local (A), NAME._http._tcp.local
// (SRV) and the home-automation service NAME._mupibox._tcp.local (SRV and
// TXT), the way a phone or Home Assistant on the home network would, from a
// port other than 5353 (a "legacy unicast" query: the answer comes back to
// it). It asks again each second until all are answered or budget runs
// out.
func queryMDNS(ifi *net.Interface, name string, budget time.Duration) (string, error) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: apAddr})
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := ipv4.NewPacketConn(c).SetMulticastInterface(ifi); err != nil {
		return "", err
	}
	host, web, ha := name+".local.", name+"._http._tcp.local.", name+"._mupibox._tcp.local."
	start := time.Now()
	r, err := mdnstest.Query(c, []dns.Question{
		mdnstest.Question(host, dns.TypeA),
		mdnstest.Question(web, dns.TypeSRV),
		mdnstest.Question(ha, dns.TypeSRV),
		mdnstest.Question(ha, dns.TypeTXT),
	}, budget, func(r *mdnstest.Records) bool {
		return len(r.A[host]) > 0 && r.SRV[web] != "" && r.SRV[ha] != "" && r.TXT[ha]["device_id"] != ""
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("a=%s srv=%s mupibox=%s device_id=%s after=%.1fs", strings.Join(r.A[host], ","), r.SRV[web], r.SRV[ha],
		r.TXT[ha]["device_id"], time.Since(start).Seconds()), nil
}
