package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// netLab is the network the soak makes: a namespace for the radio station
// (the internet, as far as the box is concerned), joined to this machine by
// a veth pair whose host end the soak takes down and up; and a namespace
// with nothing but loopback for netd.
type netLab struct {
	radioNS, netdNS string
	hostIf, radioIf string
	hostIP, radioIP string
	made            []func() // undo, newest last
}

// setupNet makes the namespaces and the link; id keeps names and the
// subnet apart from another soak's on the same machine.
func setupNet(id int) (*netLab, error) {
	n := &netLab{
		radioNS: fmt.Sprintf("soak%d-radio", id), netdNS: fmt.Sprintf("soak%d-netd", id),
		hostIf: fmt.Sprintf("sk%dh", id%100000), radioIf: fmt.Sprintf("sk%dr", id%100000),
	}
	subnet, err := freeSubnet(id)
	if err != nil {
		return nil, err
	}
	n.hostIP, n.radioIP = subnet+".1", subnet+".2"
	steps := []struct {
		do, undo []string
	}{
		{[]string{"netns", "add", n.radioNS}, []string{"netns", "del", n.radioNS}},
		{[]string{"netns", "add", n.netdNS}, []string{"netns", "del", n.netdNS}},
		{[]string{"-n", n.netdNS, "link", "set", "lo", "up"}, nil},
		{[]string{"-n", n.radioNS, "link", "set", "lo", "up"}, nil},
		{[]string{"link", "add", n.hostIf, "type", "veth", "peer", "name", n.radioIf, "netns", n.radioNS}, []string{"link", "del", n.hostIf}},
		{[]string{"addr", "add", n.hostIP + "/30", "dev", n.hostIf}, nil},
		{[]string{"-n", n.radioNS, "addr", "add", n.radioIP + "/30", "dev", n.radioIf}, nil},
		{[]string{"-n", n.radioNS, "link", "set", n.radioIf, "up"}, nil},
		{[]string{"link", "set", n.hostIf, "up"}, nil},
		// Never anywhere else: were the link's own route ever gone, the
		// station's address would be sent to this machine's default route.
		{[]string{"route", "add", "unreachable", subnet + ".0/30", "metric", "4000"}, []string{"route", "del", "unreachable", subnet + ".0/30", "metric", "4000"}},
	}
	for _, s := range steps {
		if err := ip(s.do...); err != nil {
			n.teardown()
			return nil, err
		}
		if s.undo != nil {
			undo := s.undo
			n.made = append(n.made, func() { _ = ip(undo...) })
		}
	}
	return n, nil
}

// freeSubnet is the first three parts of a 10.231.N.0/30 that no
// interface here uses; the host end is .1, the station .2.
func freeSubnet(id int) (string, error) {
	out, err := exec.Command("ip", "-4", "-o", "addr").Output()
	if err != nil {
		return "", fmt.Errorf("ip addr: %w (is iproute2 installed?)", err)
	}
	for i := range 250 {
		prefix := fmt.Sprintf("10.231.%d", (id+i)%250)
		if !strings.Contains(string(out), " "+prefix+".") {
			return prefix, nil
		}
	}
	return "", fmt.Errorf("no free subnet in 10.231.0.0/16")
}

func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (n *netLab) teardown() {
	for i := len(n.made) - 1; i >= 0; i-- {
		n.made[i]()
	}
	n.made = nil
}

// setLink takes the station's end of its link down or up: down, its
// packets go nowhere, as when a home router loses its uplink. Streams
// stall and new connections find no one (the host's end and its route
// stay, so nothing reaches another network).
func (n *netLab) setLink(up bool) error {
	state := "down"
	if up {
		state = "up"
	}
	return ip("-n", n.radioNS, "link", "set", n.radioIf, state)
}

// listenInRadio opens a TCP listener inside the radio namespace. A socket
// belongs to the namespace of the thread that made it, so one thread
// enters the namespace, makes it, and ends with its goroutine (it is never
// unlocked, so Go does not reuse it).
func (n *netLab) listenInRadio(port int) (net.Listener, error) {
	type result struct {
		ln  net.Listener
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		f, err := os.Open("/var/run/netns/" + n.radioNS)
		if err != nil {
			ch <- result{nil, err}
			return
		}
		defer f.Close()
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			ch <- result{nil, fmt.Errorf("setns %s: %w", n.radioNS, err)}
			return
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", n.radioIP, port))
		ch <- result{ln, err}
	}()
	r := <-ch
	return r.ln, r.err
}
