//go:build linux

package main

import (
	"net"
	"testing"
	"time"
)

func clientMsg(hw net.HardwareAddr, typ byte, opts ...byte) []byte {
	b := make([]byte, bootpHeader)
	b[0], b[1], b[2] = 1, 1, 6
	copy(b[4:8], []byte{0xde, 0xad, 0xbe, 0xef})
	copy(b[28:], hw)
	b = append(b, dhcpMagic...)
	b = append(b, optMsgType, 1, typ)
	b = append(b, opts...)
	return append(b, optEnd)
}

func TestDHCPD(t *testing.T) {
	d := &dhcpd{Server: net.IPv4(10, 42, 0, 1), Mask: net.CIDRMask(24, 32), First: net.IPv4(10, 42, 0, 100), Lease: time.Hour}
	hw := net.HardwareAddr{2, 0, 0, 0, 0, 0}
	offer, ok := d.reply(clientMsg(hw, dhcpDiscover))
	if !ok {
		t.Fatal("no offer")
	}
	opts := parseOptions(offer[bootpHeader+4:])
	if offer[0] != 2 || string(offer[4:8]) != "\xde\xad\xbe\xef" || !net.IP(offer[16:20]).Equal(net.IPv4(10, 42, 0, 100)) ||
		opts[optMsgType][0] != dhcpOffer || !net.IP(opts[optRouter]).Equal(d.Server) || !net.IP(opts[optServerID]).Equal(d.Server) ||
		net.IPMask(opts[optSubnetMask]).String() != "ffffff00" || len(offer) < 300 {
		t.Fatalf("offer % x", offer)
	}

	ack, ok := d.reply(clientMsg(hw, dhcpRequest, optRequested, 4, 10, 42, 0, 100, optServerID, 4, 10, 42, 0, 1))
	if !ok || parseOptions(ack[bootpHeader+4:])[optMsgType][0] != dhcpAck || !net.IP(ack[16:20]).Equal(net.IPv4(10, 42, 0, 100)) {
		t.Fatalf("ack % x", ack)
	}
	nak, ok := d.reply(clientMsg(hw, dhcpRequest, optRequested, 4, 10, 42, 0, 7))
	if !ok || parseOptions(nak[bootpHeader+4:])[optMsgType][0] != dhcpNak {
		t.Fatalf("request for an address not offered: % x", nak)
	}
	if _, ok := d.reply(clientMsg(hw, dhcpRequest, optRequested, 4, 10, 42, 0, 100, optServerID, 4, 10, 42, 0, 2)); ok {
		t.Fatal("answered a request meant for another server")
	}
	// A second client gets the next address; the first keeps its own.
	other, _ := d.reply(clientMsg(net.HardwareAddr{2, 0, 0, 0, 1, 0}, dhcpDiscover))
	again, _ := d.reply(clientMsg(hw, dhcpDiscover))
	if !net.IP(other[16:20]).Equal(net.IPv4(10, 42, 0, 101)) || !net.IP(again[16:20]).Equal(net.IPv4(10, 42, 0, 100)) {
		t.Fatalf("addresses %s %s", net.IP(other[16:20]), net.IP(again[16:20]))
	}
	if _, ok := d.reply([]byte("short")); ok {
		t.Fatal("answered garbage")
	}
	// Renumbered, the old address is refused and a new one offered.
	d.renumber()
	if nak, _ := d.reply(clientMsg(hw, dhcpRequest, optRequested, 4, 10, 42, 0, 100)); parseOptions(nak[bootpHeader+4:])[optMsgType][0] != dhcpNak {
		t.Fatalf("the old address after renumbering: % x", nak)
	}
	if offer, _ := d.reply(clientMsg(hw, dhcpDiscover)); !net.IP(offer[16:20]).Equal(net.IPv4(10, 42, 0, 150)) {
		t.Fatalf("after renumbering: %s", net.IP(offer[16:20]))
	}
}
