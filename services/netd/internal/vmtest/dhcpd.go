//go:build linux

package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DHCP message types (RFC 2132 option 53) and the options used here.
const (
	dhcpDiscover = 1
	dhcpOffer    = 2
	dhcpRequest  = 3
	dhcpAck      = 5
	dhcpNak      = 6

	optSubnetMask = 1
	optRouter     = 3
	optDNS        = 6
	optRequested  = 50
	optLeaseTime  = 51
	optMsgType    = 53
	optServerID   = 54
	optEnd        = 255

	bootpHeader = 236 // up to the magic cookie
)

var dhcpMagic = []byte{99, 130, 83, 99}

// dhcpd is the test network's DHCP server: one address per client
// hardware address from First on, the server as router and DNS server.
// It is as small as the client on the box (gokrazy's dhcp) lets it be.
type dhcpd struct {
	Server net.IP // our address, also the router
	Mask   net.IPMask
	First  net.IP
	Lease  time.Duration

	mu     sync.Mutex
	leases map[string]net.IP
}

// reply answers one client message; ok is false when it wants no answer
// (not a request, another server's offer taken, unknown type).
func (d *dhcpd) reply(req []byte) (resp []byte, ok bool) {
	if len(req) < bootpHeader+4 || req[0] != 1 || !bytes.Equal(req[bootpHeader:bootpHeader+4], dhcpMagic) {
		return nil, false
	}
	hlen := int(req[2])
	if hlen == 0 || hlen > 16 {
		return nil, false
	}
	chaddr := net.HardwareAddr(req[28 : 28+hlen])
	opts := parseOptions(req[bootpHeader+4:])
	mt := opts[optMsgType]
	if len(mt) != 1 {
		return nil, false
	}
	ip := d.lease(chaddr)
	switch mt[0] {
	case dhcpDiscover:
		return d.message(req, dhcpOffer, ip), true
	case dhcpRequest:
		if id := opts[optServerID]; id != nil && !net.IP(id).Equal(d.Server) {
			return nil, false // it took another server's offer
		}
		want := net.IP(opts[optRequested])
		if want == nil {
			want = net.IP(req[12:16]) // renewing: ciaddr
		}
		if !want.Equal(ip) {
			return d.message(req, dhcpNak, nil), true
		}
		return d.message(req, dhcpAck, ip), true
	}
	return nil, false
}

// renumber forgets every lease and hands out addresses from 50 further
// on, as a router that was reset or another network would: a client that
// asks for its old address is refused and gets a new one.
func (d *dhcpd) renumber() {
	d.mu.Lock()
	defer d.mu.Unlock()
	first := make(net.IP, 4)
	binary.BigEndian.PutUint32(first, binary.BigEndian.Uint32(d.First.To4())+50)
	d.First, d.leases = first, nil
}

func (d *dhcpd) lease(hw net.HardwareAddr) net.IP {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.leases == nil {
		d.leases = map[string]net.IP{}
	}
	if ip, ok := d.leases[hw.String()]; ok {
		return ip
	}
	ip := make(net.IP, 4)
	binary.BigEndian.PutUint32(ip, binary.BigEndian.Uint32(d.First.To4())+uint32(len(d.leases)))
	d.leases[hw.String()] = ip
	return ip
}

func (d *dhcpd) message(req []byte, typ byte, yiaddr net.IP) []byte {
	b := make([]byte, bootpHeader, 300)
	b[0], b[1], b[2] = 2, req[1], req[2] // BOOTREPLY, the client's hardware type and length
	copy(b[4:8], req[4:8])               // xid
	copy(b[10:12], req[10:12])           // flags
	if yiaddr != nil {
		copy(b[16:20], yiaddr.To4())
	}
	copy(b[20:24], d.Server.To4())
	copy(b[28:44], req[28:44]) // chaddr
	b = append(b, dhcpMagic...)
	b = append(b, optMsgType, 1, typ, optServerID, 4)
	b = append(b, d.Server.To4()...)
	if typ != dhcpNak {
		var lt [4]byte
		binary.BigEndian.PutUint32(lt[:], uint32(d.Lease/time.Second))
		b = append(b, optLeaseTime, 4)
		b = append(b, lt[:]...)
		b = append(b, optSubnetMask, 4)
		b = append(b, d.Mask...)
		b = append(b, optRouter, 4)
		b = append(b, d.Server.To4()...)
		b = append(b, optDNS, 4)
		b = append(b, d.Server.To4()...)
	}
	b = append(b, optEnd)
	for len(b) < 300 { // the BOOTP minimum some clients insist on
		b = append(b, 0)
	}
	return b
}

func parseOptions(b []byte) map[byte][]byte {
	m := map[byte][]byte{}
	for i := 0; i < len(b); {
		code := b[i]
		if code == 0 {
			i++
			continue
		}
		if code == optEnd || i+1 >= len(b) {
			break
		}
		n := int(b[i+1])
		if i+2+n > len(b) {
			break
		}
		m[code] = b[i+2 : i+2+n]
		i += 2 + n
	}
	return m
}

// serve answers on iface until ctx ends. Replies go to the broadcast
// address: the client has no address yet, and gokrazy's dhcp reads every
// IPv4 packet of its interface.
func (d *dhcpd) serve(ctx context.Context, iface string, logf func(string, ...any)) error {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_BROADCAST, 1); serr != nil {
				return
			}
			serr = unix.BindToDevice(int(fd), iface)
		})
		if err != nil {
			return err
		}
		return serr
	}}
	pc, err := lc.ListenPacket(ctx, "udp4", ":67")
	if err != nil {
		return fmt.Errorf("dhcpd: %w", err)
	}
	go func() { <-ctx.Done(); pc.Close() }()
	buf := make([]byte, 1500)
	for {
		n, _, err := pc.ReadFrom(buf)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("dhcpd: %w", err)
		}
		resp, ok := d.reply(buf[:n])
		if !ok {
			continue
		}
		if _, err := pc.WriteTo(resp, &net.UDPAddr{IP: net.IPv4bcast, Port: 68}); err != nil {
			logf("dhcpd: reply: %v", err) // the interface may be down while hostapd restarts
			continue
		}
		logf("dhcpd: %s to %s: %s", msgName(resp[bootpHeader+6]), net.HardwareAddr(resp[28:34]), net.IP(resp[16:20]))
	}
}

func msgName(t byte) string {
	switch t {
	case dhcpOffer:
		return "offer"
	case dhcpAck:
		return "ack"
	case dhcpNak:
		return "nak"
	}
	return fmt.Sprint(t)
}
