//go:build linux

// Command cards is the /init of the cards and buttons integration VM
// (run.sh boots it). It starts the real playerd binary with -input auto,
// creates a card reader and a keyboard through uinput, and drives the box
// through its admin API as a parent and through the devices as a child:
// an unknown card is reported, learned, assigned; placing it starts the
// folder; the same card within 2 s does nothing; a stop card stops; the
// keyboard's digits are no card but its play/pause key acts; the reader is
// grabbed (nobody else can grab it), unplugged in the middle of a number
// and plugged in again; a button on a GPIO line of the virt board's PL061,
// pressed by QEMU's system_powerdown, toggles playback; the wall clock steps
// by an hour and a year, both ways, under a session, a daily limit and the
// sleep timer (clock.go). One RESULT line per case, then the VM powers off.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	evdev "github.com/holoplot/go-evdev"
	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/playerd/internal/testmedia"
)

const (
	base   = "http://127.0.0.1:8090"
	card   = "0004921380"
	stop   = "00000001"
	taught = "1234ABCD"
)

var modules = []string{"evdev", "uinput"}

func main() {
	fmt.Println("vmtest: start")
	if err := setup(); err != nil {
		fmt.Printf("RESULT setup FAIL %v\n", err)
	} else {
		run()
	}
	fmt.Println("RESULT done")
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Println("vmtest: power off:", err)
	}
	select {}
}

func check(name string, f func() error) bool {
	if err := f(); err != nil {
		fmt.Printf("RESULT %s FAIL %v\n", name, err)
		return false
	}
	fmt.Printf("RESULT %s ok\n", name)
	return true
}

func setup() error {
	for _, m := range []struct{ src, dst, fs string }{{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"}} {
		if err := unix.Mount(m.src, m.dst, m.fs, 0, ""); err != nil {
			return fmt.Errorf("mount %s: %w", m.dst, err)
		}
	}
	for _, m := range modules {
		f, err := os.Open(filepath.Join("/modules", m+".ko"))
		if err != nil {
			return err
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("load %s: %w", m, err)
		}
	}
	if err := loopbackUp(); err != nil {
		return err
	}
	if err := waitFor(func() bool { _, err := os.Stat("/dev/uinput"); return err == nil }); err != nil {
		return errors.New("/dev/uinput did not appear")
	}
	return testmedia.Library("/media", map[string][]float64{"Hoerspiele/Folge A": {60, 60}, "Hoerspiele/Folge B": {60}})
}

// loopbackUp brings lo up; the kernel gives it 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	ifr.SetUint16(unix.IFF_UP | unix.IFF_LOOPBACK | unix.IFF_RUNNING)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("lo up: %w", err)
	}
	return nil
}

// waitFor polls cond for up to 60 s (TCG is slow; this only bounds a hang).
func waitFor(cond func() bool) error {
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil
}

// request sends one request to the box, with the session once there is
// one.
func request(method, path, body string) (*http.Response, error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if session != nil {
		req.AddCookie(session)
	}
	return http.DefaultClient.Do(req)
}

func call(method, path, body string, out any) (int, error) {
	resp, err := request(method, path, body)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: %w: %s", method, path, err, data)
		}
	}
	if resp.StatusCode != 200 {
		return resp.StatusCode, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, bytes.TrimSpace(data))
	}
	return resp.StatusCode, nil
}

type status struct {
	State    string  `json:"state"`
	FolderID *string `json:"folder_id"`
	Position float64 `json:"position"`
}

type read struct {
	ID      string    `json:"id"`
	At      time.Time `json:"at"`
	Outcome string    `json:"outcome"`
}

type inputView struct {
	Status struct {
		Devices []struct {
			Path, Name, Vendor, Product, Role string
		} `json:"devices"`
		GPIO struct {
			State, Chip, Error string
		} `json:"gpio"`
	} `json:"status"`
}

func playerStatus() status {
	var s status
	call("GET", "/api/status", "", &s)
	return s
}

func reads() []read {
	var r []read
	call("GET", "/api/admin/cards/reads", "", &r)
	return r
}

func devices() inputView {
	var v inputView
	call("GET", "/api/admin/input", "", &v)
	return v
}

// A uinput keyboard: readers are keyboards to the kernel.
type keyboard struct {
	name string
	id   evdev.InputID
	dev  *evdev.InputDevice
}

func keyCodes(extra ...evdev.EvCode) []evdev.EvCode {
	var k []evdev.EvCode
	for c := evdev.KEY_ESC; c <= evdev.KEY_KPDOT; c++ {
		k = append(k, evdev.EvCode(c))
	}
	return append(k, extra...)
}

func (k *keyboard) plug(extra ...evdev.EvCode) error {
	dev, err := evdev.CreateDevice(k.name, k.id, map[evdev.EvType][]evdev.EvCode{
		evdev.EV_KEY: keyCodes(extra...),
		evdev.EV_MSC: {evdev.MSC_SCAN},
	})
	if err != nil {
		return fmt.Errorf("uinput %s: %w", k.name, err)
	}
	k.dev = dev
	return nil
}

func (k *keyboard) unplug() error { return evdev.DestroyDevice(k.dev) }

func (k *keyboard) key(code evdev.EvCode, v int32) error {
	for _, ev := range []evdev.InputEvent{
		{Type: evdev.EV_MSC, Code: evdev.MSC_SCAN, Value: 0x70000 + int32(code)},
		{Type: evdev.EV_KEY, Code: code, Value: v},
		{Type: evdev.EV_SYN, Code: evdev.SYN_REPORT},
	} {
		if err := k.dev.WriteOne(&ev); err != nil {
			return err
		}
	}
	time.Sleep(2 * time.Millisecond) // a reader's pace; the box needs none
	return nil
}

func (k *keyboard) tap(code evdev.EvCode, shift bool) error {
	steps := []struct {
		c evdev.EvCode
		v int32
	}{{code, 1}, {code, 0}}
	if shift {
		steps = append([]struct {
			c evdev.EvCode
			v int32
		}{{evdev.KEY_LEFTSHIFT, 1}}, append(steps, struct {
			c evdev.EvCode
			v int32
		}{evdev.KEY_LEFTSHIFT, 0})...)
	}
	for _, s := range steps {
		if err := k.key(s.c, s.v); err != nil {
			return err
		}
	}
	return nil
}

// typeText types digits and capital letters as a US-layout reader does
// (Shift for capitals), and Enter if asked.
func (k *keyboard) typeText(s string, enter bool) error {
	for _, c := range s {
		var code evdev.EvCode
		shift := false
		switch {
		case c == '0':
			code = evdev.KEY_0
		case c >= '1' && c <= '9':
			code = evdev.KEY_1 + evdev.EvCode(c-'1')
		case c >= 'A' && c <= 'Z':
			code, shift = letterKey(c), true
		default:
			return fmt.Errorf("no key for %q", c)
		}
		if err := k.tap(code, shift); err != nil {
			return err
		}
	}
	if enter {
		return k.tap(evdev.KEY_ENTER, false)
	}
	return nil
}

func letterKey(c rune) evdev.EvCode {
	for _, row := range []struct {
		first evdev.EvCode
		keys  string
	}{{evdev.KEY_Q, "QWERTYUIOP"}, {evdev.KEY_A, "ASDFGHJKL"}, {evdev.KEY_Z, "ZXCVBNM"}} {
		if i := strings.IndexRune(row.keys, c); i >= 0 {
			return row.first + evdev.EvCode(i)
		}
	}
	return 0
}

var (
	reader = &keyboard{name: "IC Reader IC Reader", id: evdev.InputID{BusType: 0x03, Vendor: 0xffff, Product: 0x0035}}
	kbd    = &keyboard{name: "storybox test keyboard", id: evdev.InputID{BusType: 0x03, Vendor: 0x1234, Product: 0x5678}}
)

// place types a card on the reader and waits until the box has read it,
// returning the read.
func place(id string) (read, error) {
	before := reads()
	if err := reader.typeText(id, true); err != nil {
		return read{}, err
	}
	var r read
	err := waitFor(func() bool {
		now := reads()
		if len(now) > 0 && (len(now) > len(before) || !now[0].At.Equal(before[0].At)) {
			r = now[0]
			return true
		}
		return false
	})
	if err != nil {
		return read{}, fmt.Errorf("the box did not read %s", id)
	}
	return r, nil
}

// afterRepeat waits until the last read of id is older than the box's
// 2-second window: the rule under test is about wall time.
func afterRepeat(id string) {
	for _, r := range reads() {
		if r.ID == id {
			if d := time.Until(r.At.Add(2100 * time.Millisecond)); d > 0 {
				time.Sleep(d)
			}
			return
		}
	}
}

func run() {
	os.MkdirAll("/data", 0o755)
	cmd := exec.Command("/playerd", "-listen", "127.0.0.1:8090", "-media", "/media", "-data", "/data",
		"-output", "null", "-fb", "none", "-touch", "none", "-input", "auto", "-speech-program", "/none", "-hostname", "box")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stdout
	if err := cmd.Start(); err != nil {
		fmt.Printf("RESULT playerd FAIL %v\n", err)
		return
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait() }()
	if !check("playerd", func() error {
		return waitFor(func() bool {
			var info struct {
				Library struct{ Scanned bool } `json:"library"`
			}
			_, err := call("GET", "/api/info", "", &info)
			return err == nil && info.Library.Scanned
		})
	}) {
		return
	}
	var lib []struct{ ID, Name string }
	call("GET", "/api/library", "", &lib)
	folder := map[string]string{}
	for _, f := range lib {
		folder[f.Name] = f.ID
	}

	ok := check("claim", func() error {
		if err := reader.plug(); err != nil {
			return err
		}
		if err := kbd.plug(evdev.KEY_PLAYPAUSE, evdev.KEY_NEXTSONG); err != nil {
			return err
		}
		var v inputView
		if err := waitFor(func() bool { v = devices(); return len(v.Status.Devices) == 2 }); err != nil {
			return fmt.Errorf("devices: %+v", v.Status.Devices)
		}
		var readerPath string
		for _, d := range v.Status.Devices {
			switch d.Name {
			case reader.name:
				if d.Role != "reader" || d.Vendor != "ffff" || d.Product != "0035" {
					return fmt.Errorf("reader as %+v", d)
				}
				readerPath = d.Path
			case kbd.name:
				if d.Role != "keys" {
					return fmt.Errorf("keyboard as %+v", d)
				}
			}
		}
		// Grabbed: nobody else gets the reader.
		dev, err := evdev.OpenWithFlags(readerPath, os.O_RDONLY)
		if err != nil {
			return err
		}
		defer dev.Close()
		// go-evdev keeps only the errno's text.
		if err := dev.Grab(); err == nil || err.Error() != unix.EBUSY.Error() {
			return fmt.Errorf("grabbing the reader a second time: %v, want EBUSY", err)
		}
		return nil
	})
	if !ok {
		return
	}
	check("unknown", func() error {
		r, err := place(card)
		if err != nil {
			return err
		}
		if r.ID != card || r.Outcome != "unknown" {
			return fmt.Errorf("read %+v", r)
		}
		var u []struct{ ID, Device string }
		call("GET", "/api/admin/cards/unknown", "", &u)
		if len(u) != 1 || u[0].ID != card || u[0].Device != reader.name {
			return fmt.Errorf("unknown list %+v", u)
		}
		return nil
	})
	check("teach", func() error {
		if _, err := call("POST", "/api/admin/cards/learn", `{"timeout_seconds":120}`, nil); err != nil {
			return err
		}
		if _, err := place(taught); err != nil {
			return err
		}
		var l struct {
			State string
			Card  struct {
				ID    string
				Known bool
			}
		}
		if _, err := call("GET", "/api/admin/cards/learn?wait=20", "", &l); err != nil {
			return err
		}
		if l.State != "seen" || l.Card.ID != taught || l.Card.Known {
			return fmt.Errorf("teach mode %+v", l)
		}
		return nil
	})
	check("assign and play", func() error {
		for id, body := range map[string]string{
			card: `{"action":"folder","folder_id":"` + folder["Folge A"] + `"}`,
			stop: `{"action":"stop"}`,
		} {
			if _, err := call("PUT", "/api/admin/cards/"+id, body, nil); err != nil {
				return err
			}
		}
		afterRepeat(card)
		r, err := place(card)
		if err != nil {
			return err
		}
		if r.Outcome != "started" {
			return fmt.Errorf("read %+v", r)
		}
		return waitFor(func() bool {
			s := playerStatus()
			return s.State == "playing" && s.FolderID != nil && *s.FolderID == folder["Folge A"]
		})
	})
	check("repeat within 2 s", func() error {
		r, err := place(card)
		if err != nil {
			return err
		}
		if r.Outcome != "repeat" {
			return fmt.Errorf("read %+v", r)
		}
		if s := playerStatus(); s.State != "playing" || *s.FolderID != folder["Folge A"] {
			return fmt.Errorf("status %+v", s)
		}
		return nil
	})
	check("keyboard", func() error {
		n := len(reads())
		if err := kbd.typeText("999", true); err != nil {
			return err
		}
		if err := kbd.tap(evdev.KEY_PLAYPAUSE, false); err != nil {
			return err
		}
		if err := waitFor(func() bool { return playerStatus().State == "paused" }); err != nil {
			return errors.New("play/pause did not pause")
		}
		if len(reads()) != n {
			return fmt.Errorf("the keyboard's digits were read as a card: %+v", reads()[0])
		}
		return nil
	})
	check("stop card", func() error {
		if err := kbd.tap(evdev.KEY_PLAYPAUSE, false); err != nil {
			return err
		}
		if err := waitFor(func() bool { return playerStatus().State == "playing" }); err != nil {
			return errors.New("play/pause did not play")
		}
		r, err := place(stop)
		if err != nil {
			return err
		}
		if r.Outcome != "done" {
			return fmt.Errorf("read %+v", r)
		}
		return waitFor(func() bool { return playerStatus().State == "stopped" })
	})
	check("replug", func() error {
		if err := reader.typeText("00049", false); err != nil {
			return err
		}
		if err := reader.unplug(); err != nil {
			return err
		}
		if err := waitFor(func() bool { return len(devices().Status.Devices) == 1 }); err != nil {
			return errors.New("the unplugged reader is still claimed")
		}
		if err := reader.plug(); err != nil {
			return err
		}
		if err := waitFor(func() bool { return len(devices().Status.Devices) == 2 }); err != nil {
			return errors.New("the reader was not claimed again")
		}
		afterRepeat(card)
		r, err := place(card)
		if err != nil {
			return err
		}
		if r.ID != card || r.Outcome != "started" {
			return fmt.Errorf("read %+v", r)
		}
		return waitFor(func() bool { return playerStatus().State == "playing" })
	})
	check("gpio button", func() error {
		body := `{"gpio":{"chip":"auto","active_low":false,"bias":"disabled","debounce_ms":10,"buttons":[{"line":3,"action":"toggle"}]}}`
		if _, err := call("PUT", "/api/admin/input", body, nil); err != nil {
			return err
		}
		var v inputView
		if err := waitFor(func() bool { v = devices(); return v.Status.GPIO.State == "ok" }); err != nil {
			return fmt.Errorf("gpio status %+v", v.Status.GPIO)
		}
		fmt.Println("vmtest: gpio", v.Status.GPIO.Chip)
		if s := playerStatus(); s.State != "playing" {
			return fmt.Errorf("status before the press %+v", s)
		}
		fmt.Println("vmtest: press the power button") // run.sh sends system_powerdown
		if err := waitFor(func() bool { return playerStatus().State == "paused" }); err != nil {
			return errors.New("the button press did not pause")
		}
		return nil
	})
	check("clock steps", clockSteps)
}
