//go:build linux

// Command vmtest is the /init of netd's radio integration VM (run.sh boots
// it): Debian's arm64 kernel with two mac80211_hwsim radios, the real netd
// binary on the first, and on the second, moved into a network namespace of
// its own, Debian's hostapd (an open network and a WPA2 one), a small DHCP
// server and an mDNS client. It drives netd through its socket as playerd
// would: adapters, regulatory country, scan, join, address by gokrazy's own
// DHCP client, the refusal of WPA2 without handshake offload, mDNS over the
// air (the box, its web service and the home-automation service playerd
// asks netd to announce), the access point going away and coming back
// (announced again on the new lease), and a clean stop. It
// prints one RESULT line per case and powers the VM off.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/mdlayher/genetlink"
	"github.com/mdlayher/netlink"
	vnl "github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/netapi"
	"github.com/storybox/storybox/services/netd/internal/kmod"
)

const (
	socket   = "/run/netd/netd.sock"
	hostname = "storybox-vm"
	station  = "wlan0"
)

func main() {
	// gokrazy's dhcp tells init (pid 1, which is us here) about a new
	// lease with SIGHUP, which would end a Go program.
	signal.Ignore(syscall.SIGHUP)
	if len(os.Args) > 1 && os.Args[1] == "ap" {
		os.Exit(apMain())
	}
	fmt.Println("vmtest: start")
	t := &test{}
	if err := t.setup(); err != nil {
		fmt.Printf("RESULT setup FAIL %v\n", err)
	} else {
		t.run()
	}
	t.teardown()
	fmt.Println("RESULT done")
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Println("vmtest: power off:", err)
	}
	select {}
}

type test struct {
	// pi: the Raspberry Pi's own kernel (kernel.rpi) with the image's
	// /lib/modules and /lib/firmware, but no radio (pi.go).
	pi       bool
	netd     *exec.Cmd
	netdDone chan error
	ap       *exec.Cmd
	apIn     io.Writer
	apOut    *bufio.Scanner
	sock     *daemon.Client
	ipv4     string
}

type testCase struct {
	name string
	f    func() (string, error)
}

func (t *test) run() {
	cases := []testCase{
		{"adapters", t.adapters},
		{"country", t.country},
		{"scan", t.scan},
		{"join", t.join},
		{"wpa2-refused", t.wpa2Refused},
		{"mdns", t.mdns},
		{"reconnect", t.reconnect},
		{"stop", t.stop},
	}
	if t.pi {
		cases = []testCase{{"pi-modules", t.piModules}, {"pi-country", t.country}, {"stop", t.stop}}
	}
	for _, c := range cases {
		figures, err := c.f()
		if err != nil {
			fmt.Printf("RESULT %s FAIL %v\n", c.name, err)
			return // each case builds on the one before
		}
		fmt.Printf("RESULT %s ok %s\n", c.name, figures)
	}
}

func (t *test) setup() error {
	for _, m := range []struct{ src, dst, fs string }{{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"}} {
		if err := unix.Mount(m.src, m.dst, m.fs, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.dst, err)
		}
	}
	t.pi = kernelArg("storybox.kernel") == "pi"
	for _, d := range []string{"/tmp", "/run"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := unix.Sethostname([]byte(hostname)); err != nil {
		return err
	}
	lo, err := vnl.LinkByName("lo")
	if err != nil {
		return err
	}
	if err := vnl.LinkSetUp(lo); err != nil {
		return err
	}
	t.sock = daemon.NewClient(socket, "netd", "netd unavailable")
	if t.pi {
		return t.setupPi()
	}
	// run.sh lays the modules out under /lib/modules/vm with a
	// modules.dep; the kernel's release names the directory.
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return err
	}
	if err := os.Symlink("vm", filepath.Join("/lib/modules", unix.ByteSliceToString(u.Release[:]))); err != nil {
		return err
	}
	// mac80211 asks for the CCMP cipher when hostapd sets the WPA2
	// network's group key; the kernel would ask modprobe for it, which
	// is not here.
	l, err := kmod.Default()
	if err != nil {
		return err
	}
	if err := l.Load("ctr", "ccm"); err != nil {
		return err
	}
	if err := t.startNetd("-interface="+station, "-modules=mac80211_hwsim", "-retry-max=4s"); err != nil {
		return err
	}
	// Both radios exist once netd has loaded the driver; the second goes
	// to the access point.
	if err := waitFor("/sys/class/net/wlan1", 30*time.Second); err != nil {
		return err
	}
	return t.startAP("wlan1")
}

// startNetd runs netd as the image does, with the country set and the
// given flags: on the radios' kernel it loads their driver with its own
// module loader (as brcmfmac on the Pi) and waits at most 4 s between join
// attempts, so that the reconnect case stays short.
func (t *test) startNetd(flags ...string) error {
	t.netd = exec.Command("/netd", append([]string{"-socket=" + socket, "-state=/tmp/netd", "-country=DE", "-hostname=" + hostname}, flags...)...)
	t.netd.Stdout, t.netd.Stderr = os.Stdout, os.Stdout
	if err := t.netd.Start(); err != nil {
		return err
	}
	t.netdDone = make(chan error, 1)
	go func() { t.netdDone <- t.netd.Wait() }()
	_, err := t.waitStatus("netd answering on its socket", 30*time.Second, func(st netapi.Status) bool { return true })
	return err
}

// startAP starts the access point side in a new network namespace and
// moves iface's radio (its wiphy) there.
func (t *test) startAP(iface string) error {
	b, err := os.ReadFile("/sys/class/net/" + iface + "/phy80211/index")
	if err != nil {
		return err
	}
	var phy uint32
	if _, err := fmt.Sscan(string(b), &phy); err != nil {
		return err
	}
	t.ap = exec.Command("/init", "ap")
	t.ap.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	t.ap.Stderr = os.Stdout
	in, err := t.ap.StdinPipe()
	if err != nil {
		return err
	}
	out, err := t.ap.StdoutPipe()
	if err != nil {
		return err
	}
	if err := t.ap.Start(); err != nil {
		return err
	}
	t.apIn, t.apOut = in, bufio.NewScanner(out)
	if err := movePHY(phy, t.ap.Process.Pid); err != nil {
		return fmt.Errorf("move phy%d to the access point's namespace: %w", phy, err)
	}
	_, err = t.apAnswer()
	return err
}

// movePHY is `iw phy PHY set netns PID`.
func movePHY(phy uint32, pid int) error {
	c, err := genetlink.Dial(nil)
	if err != nil {
		return err
	}
	defer c.Close()
	fam, err := c.GetFamily("nl80211")
	if err != nil {
		return err
	}
	ae := netlink.NewAttributeEncoder()
	ae.Uint32(unix.NL80211_ATTR_WIPHY, phy)
	ae.Uint32(unix.NL80211_ATTR_PID, uint32(pid))
	data, err := ae.Encode()
	if err != nil {
		return err
	}
	_, err = c.Execute(genetlink.Message{Header: genetlink.Header{Command: unix.NL80211_CMD_SET_WIPHY_NETNS, Version: fam.Version}, Data: data},
		fam.ID, netlink.Request|netlink.Acknowledge)
	return err
}

// apDo sends the access point side one command and reads its answer.
func (t *test) apDo(cmd string) (string, error) {
	if _, err := fmt.Fprintln(t.apIn, cmd); err != nil {
		return "", err
	}
	return t.apAnswer()
}

func (t *test) apAnswer() (string, error) {
	if !t.apOut.Scan() {
		return "", fmt.Errorf("the access point side ended: %v", t.apOut.Err())
	}
	line := t.apOut.Text()
	if rest, ok := strings.CutPrefix(line, "ok"); ok {
		return strings.TrimSpace(rest), nil
	}
	return "", errors.New(strings.TrimPrefix(line, "fail "))
}

func (t *test) teardown() {
	if t.ap != nil && t.ap.ProcessState == nil {
		_, _ = t.apDo("quit")
		_ = t.ap.Wait()
	}
	if t.netd != nil && t.netd.ProcessState == nil {
		_ = t.netd.Process.Kill()
		<-t.netdDone
	}
	printKernelLog("cfg80211", "hwsim", "brcmfmac")
}

// call does one request on netd's socket, as playerd's client does; out
// may be nil. netd's errors come back with their fault kind.
func (t *test) call(method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	return t.sock.Call(ctx, method, path, in, out)
}

// waitStatus polls netd's status until ok holds; limit only bounds a hang.
func (t *test) waitStatus(what string, limit time.Duration, ok func(netapi.Status) bool) (netapi.Status, error) {
	var st netapi.Status
	var err error
	for deadline := time.Now().Add(limit); ; {
		st = netapi.Status{}
		if err = t.call("GET", "/status", nil, &st); err == nil && ok(st) {
			return st, nil
		}
		if time.Now().After(deadline) {
			b, _ := json.Marshal(st)
			return st, fmt.Errorf("waiting %s for %s: status %s %v", limit, what, b, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (t *test) adapters() (string, error) {
	var a netapi.Adapters
	if err := t.call("GET", "/adapters", nil, &a); err != nil {
		return "", fmt.Errorf("adapters: %w", err)
	}
	for _, ad := range a.Adapters {
		if ad.Interface != station {
			continue
		}
		// mac80211_hwsim, like every mac80211 driver, has no 4-way
		// handshake offload: netd must say so rather than fail later.
		if !ad.Managed || ad.PSKOffload || !strings.Contains(ad.Note, "open networks only") {
			return "", fmt.Errorf("adapter %+v", ad)
		}
		return fmt.Sprintf("driver=%s psk_offload=%v", ad.Driver, ad.PSKOffload), nil
	}
	return "", fmt.Errorf("%s not among %+v", station, a.Adapters)
}

// country: netd sets DE at start; the kernel only takes it from the signed
// regulatory.db in /lib/firmware, the very file the Pi image ships.
func (t *test) country() (string, error) {
	st, err := t.waitStatus("country DE", 30*time.Second, func(st netapi.Status) bool { return st.Country == "DE" })
	if err != nil {
		return "", err
	}
	return "country=" + st.Country, nil
}

func (t *test) scan() (string, error) {
	start := time.Now()
	var last netapi.Scan
	for deadline := start.Add(60 * time.Second); time.Now().Before(deadline); {
		last = netapi.Scan{}
		if err := t.call("GET", "/scan?interface="+station, nil, &last); err != nil {
			return "", fmt.Errorf("scan: %w", err)
		}
		sec := map[string]string{}
		for _, n := range last.Networks {
			sec[n.SSID] = n.Security
		}
		if sec[openSSID] == "open" && sec[wpa2SSID] == "wpa2" {
			return fmt.Sprintf("networks=%d seconds=%.1f", len(last.Networks), time.Since(start).Seconds()), nil
		}
	}
	return "", fmt.Errorf("the scan never showed %s (open) and %s (wpa2): %+v", openSSID, wpa2SSID, last)
}

func (t *test) join() (string, error) {
	start := time.Now()
	var res netapi.Connected
	if err := t.call("POST", "/connect", netapi.Connect{SSID: openSSID}, &res); err != nil || !res.Connected {
		return "", fmt.Errorf("connect: %+v %v", res, err)
	}
	joined := time.Since(start)
	st, err := t.waitStatus("an address by DHCP", 60*time.Second, func(st netapi.Status) bool {
		return st.State == netapi.StateConnected && st.IPv4 != nil && st.Gateway != nil
	})
	if err != nil {
		return "", err
	}
	if *st.Gateway != apAddr.String() || !strings.HasPrefix(*st.IPv4, "10.42.0.") || st.SSID != openSSID || st.KnownNetworks != 1 {
		return "", fmt.Errorf("status %+v", st)
	}
	t.ipv4 = *st.IPv4
	fi, err := os.Stat("/tmp/netd/networks.json")
	if err != nil || fi.Mode().Perm() != 0o600 {
		return "", fmt.Errorf("known networks file: %v %v", fi, err)
	}
	return fmt.Sprintf("connect=%.1fs address=%.1fs ipv4=%s gateway=%s", joined.Seconds(), time.Since(start).Seconds(), t.ipv4, *st.Gateway), nil
}

func (t *test) wpa2Refused() (string, error) {
	err := t.call("POST", "/connect", netapi.Connect{SSID: wpa2SSID, Password: wpa2Pass}, nil)
	if fault.KindOf(err) != fault.Conflict || !strings.Contains(fault.Message(err), "open networks only") {
		return "", fmt.Errorf("WPA2 join through hwsim: %v (want 409 conflict, no offload)", err)
	}
	st, err := t.waitStatus("the status", 5*time.Second, func(netapi.Status) bool { return true })
	if err != nil {
		return "", err
	}
	if st.State != netapi.StateConnected || st.SSID != openSSID || st.IPv4 == nil || *st.IPv4 != t.ipv4 {
		return "", fmt.Errorf("the refused join cost the connection: %+v", st)
	}
	return "status=409", nil
}

// haService is what playerd asks netd to announce for Home Assistant
// (hav1.MDNSService), sent the way netclient.Announce sends it.
var haService = netapi.Service{Name: hostname, Type: "_mupibox._tcp", Port: 8443,
	Text: map[string]string{"product": "mupibox", "api_version": "1", "device_id": "vm-box-1", "transport": "https"}}

func (t *test) mdns() (string, error) {
	if err := t.call("PUT", "/mdns/services", haService, nil); err != nil {
		return "", fmt.Errorf("announce %s: %w", haService.Type, err)
	}
	res, err := t.apDo("mdns " + hostname)
	if err != nil {
		return "", err
	}
	if err := t.checkMDNS(res); err != nil {
		return "", err
	}
	return res, nil
}

// checkMDNS checks the answer of the access point's side: the box's
// address now, its web service and the home-automation service.
func (t *test) checkMDNS(res string) error {
	for _, want := range []string{"a=" + t.ipv4 + " ", "srv=" + hostname + ".local.:8090", "mupibox=" + hostname + ".local.:8443", "device_id=vm-box-1 "} {
		if !strings.Contains(res, want) {
			return fmt.Errorf("mdns answered %q, want %s", res, want)
		}
	}
	return nil
}

// reconnect takes the access point away (a router switched off) and
// brings it back: netd drops the address, tries again with a growing
// pause, joins again by itself and gets an address again.
func (t *test) reconnect() (string, error) {
	if _, err := t.apDo("stop"); err != nil {
		return "", err
	}
	gone := time.Now()
	st, err := t.waitStatus("the drop", 60*time.Second, func(st netapi.Status) bool { return st.State != netapi.StateConnected })
	if err != nil {
		return "", err
	}
	noticed := time.Since(gone)
	if st.IPv4 != nil {
		return "", fmt.Errorf("the address stayed after the drop: %+v", st)
	}
	// A retry is scheduled, and a scan without the network fails it.
	// cfg80211 keeps the vanished access point in its scan list for
	// 30 s; netd must not take that for the network being in reach and
	// sit out a join timeout on it.
	tried := false
	if _, err := t.waitStatus("a failed retry", 60*time.Second, func(st netapi.Status) bool {
		tried = tried || st.State == netapi.StateConnecting
		return st.State == netapi.StateDisconnected && st.NextAttempt != nil && strings.Contains(st.LastError, "in reach")
	}); err != nil {
		return "", err
	}
	if tried {
		return "", errors.New("netd tried to join the access point that had gone")
	}
	// It comes back having forgotten its leases: the box gets another
	// address, and must be announced with it.
	if _, err := t.apDo("renumber"); err != nil {
		return "", err
	}
	if _, err := t.apDo("start"); err != nil {
		return "", err
	}
	back := time.Now()
	old := t.ipv4
	st, err = t.waitStatus("the reconnect", 90*time.Second, func(st netapi.Status) bool {
		return st.State == netapi.StateConnected && st.IPv4 != nil && st.SSID == openSSID
	})
	if err != nil {
		return "", err
	}
	t.ipv4 = *st.IPv4
	again := time.Since(back)
	if t.ipv4 == old {
		return "", fmt.Errorf("the same address %s after the renumbering", old)
	}
	// The box, its web service and the home-automation service are
	// announced again on the new lease.
	res, err := t.apDo("mdns " + hostname)
	if err != nil {
		return "", fmt.Errorf("mdns after the reconnect: %w", err)
	}
	if err := t.checkMDNS(res); err != nil {
		return "", fmt.Errorf("after the reconnect: %w", err)
	}
	return fmt.Sprintf("drop-noticed=%.1fs reconnected=%.1fs ipv4=%s", noticed.Seconds(), again.Seconds(), t.ipv4), nil
}

func (t *test) stop() (string, error) {
	start := time.Now()
	if err := t.netd.Process.Signal(syscall.SIGTERM); err != nil {
		return "", err
	}
	select {
	case err := <-t.netdDone:
		if err != nil {
			return "", fmt.Errorf("netd ended with %v", err)
		}
	case <-time.After(15 * time.Second):
		return "", errors.New("netd did not stop within 15 s of SIGTERM")
	}
	return fmt.Sprintf("seconds=%.1f", time.Since(start).Seconds()), nil
}

// kernelArg is the value of name=value on the kernel command line.
func kernelArg(name string) string {
	b, _ := os.ReadFile("/proc/cmdline")
	for _, f := range strings.Fields(string(b)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

func waitFor(path string, limit time.Duration) error {
	for deadline := time.Now().Add(limit); ; {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not appear within %s", path, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// printKernelLog prints the kernel's lines that mention any of words, for
// the console log (the VM boots with "quiet").
func printKernelLog(words ...string) {
	// Raw reads: an os.File would wait in Go's poller for more records
	// instead of returning EAGAIN at the end.
	fd, err := unix.Open("/dev/kmsg", unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	buf := make([]byte, 8192)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EPIPE {
			continue // overwritten records
		}
		if err != nil || n <= 0 {
			return
		}
		_, msg, _ := strings.Cut(string(buf[:n]), ";")
		msg, _, _ = strings.Cut(msg, "\n")
		for _, w := range words {
			if strings.Contains(msg, w) {
				fmt.Println("kernel:", msg)
				break
			}
		}
	}
}
