//go:build linux

// Command display is the /init of the display integration VM (run.sh boots
// it): on a virtio-gpu framebuffer and a uinput touch device it checks that
// a frame reaches /dev/fb0 pixel for pixel (also when only the progress of
// a playing track is copied again), that the console is in graphics
// mode while the screen is open and back in text mode after, and that a tap
// injected through uinput is found by -touch auto and ends as a player
// command. It prints one RESULT line per case and powers the VM off.
package main

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	evdev "github.com/holoplot/go-evdev"
	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/playerd/internal/display"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// modules in load order (each needs the ones before it).
var modules = []string{
	"virtio_pci_modern_dev", "virtio_pci_legacy_dev", "virtio_pci",
	"drm", "drm_kms_helper", "drm_shmem_helper", "virtio_dma_buf", "virtio-gpu",
	"evdev", "uinput",
}

func main() {
	fmt.Println("vmtest: start")
	if err := setup(); err != nil {
		fmt.Printf("RESULT setup FAIL %v\n", err)
	} else {
		check("framebuffer", testFramebuffer)
		check("progress", testProgress)
		check("touch", testTouch)
	}
	fmt.Println("RESULT done")
	unix.Sync()
	if err := unix.Reboot(unix.LINUX_REBOOT_CMD_POWER_OFF); err != nil {
		fmt.Println("vmtest: power off:", err)
	}
	select {}
}

func check(name string, f func() error) {
	if err := f(); err != nil {
		fmt.Printf("RESULT %s FAIL %v\n", name, err)
		return
	}
	fmt.Printf("RESULT %s ok\n", name)
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
	for _, dev := range []string{"/dev/fb0", "/dev/uinput"} {
		if err := waitFor(dev); err != nil {
			return err
		}
	}
	return nil
}

func waitFor(path string) error {
	for i := 0; i < 200; i++ {
		if _, err := os.Stat(path); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("%s did not appear", path)
}

// still is a player that records commands and otherwise stands still.
type still struct {
	cmds chan player.Command
}

func (p *still) Status() player.Status {
	id, name := "f1", "Räuber Hotzenplotz"
	return player.Status{State: player.Paused, FolderID: &id, Folder: &name,
		Queue: []player.QueueItem{{ID: "t1", Title: "Kapitel 1"}}, Index: 0, Volume: 30, MaxVolume: 50,
		Position: 12, Duration: 300}
}
func (p *still) Do(_ context.Context, c player.Command) (player.Status, error) {
	p.cmds <- c
	return p.Status(), nil
}

func consoleMode() (int, error) {
	f, err := os.OpenFile("/dev/tty0", os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var mode int32
	_, _, e := unix.Syscall(unix.SYS_IOCTL, f.Fd(), 0x4b3b /* KDGETMODE */, uintptr(unsafe.Pointer(&mode)))
	if e != 0 {
		return 0, e
	}
	return int(mode), nil
}

func sysfsInt(name string) (int, error) {
	b, err := os.ReadFile("/sys/class/graphics/fb0/" + name)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(strings.Split(string(b), ",")[0]))
}

// testFramebuffer shows a frame with a message and reads /dev/fb0 back,
// decoding it from what sysfs says about the mode (not from our own code).
func testFramebuffer() error {
	fb, err := display.OpenFramebuffer("/dev/fb0", "/dev/tty0")
	if err != nil {
		return err
	}
	if m, err := consoleMode(); err != nil || m != 1 {
		fb.Close()
		return fmt.Errorf("console mode while open = %d (%v), want KD_GRAPHICS", m, err)
	}
	size := fb.Size()
	fmt.Println("vmtest: framebuffer", size)
	d, err := display.New(display.Options{Player: &still{}, Screen: fb})
	if err != nil {
		fb.Close()
		return err
	}
	msg, title := "Schön, dass du da bist! Äpfel, Öl, Übermut.", "Grüße"
	if _, err := d.ShowMessage(display.MessageRequest{Message: &msg, Title: &title}); err != nil {
		return err
	}
	frame, err := d.Snapshot(context.Background())
	if err != nil {
		return err
	}
	stride, err := sysfsInt("stride")
	if err != nil {
		return err
	}
	bpp, err := sysfsInt("bits_per_pixel")
	if err != nil {
		return err
	}
	raw, err := os.ReadFile("/dev/fb0")
	if err != nil && len(raw) == 0 {
		return fmt.Errorf("read back: %w", err)
	}
	if bpp != 32 {
		return fmt.Errorf("virtio-gpu gave %d bpp, this check decodes 32", bpp)
	}
	bad := 0
	for y := 0; y < size.Y; y++ {
		for x := 0; x < size.X; x++ {
			i := y*stride + x*4
			s := frame.Pix[frame.PixOffset(x, y):]
			if raw[i] != s[2] || raw[i+1] != s[1] || raw[i+2] != s[0] {
				bad++
			}
		}
	}
	if bad != 0 {
		return fmt.Errorf("%d pixels on /dev/fb0 differ from the frame", bad)
	}
	// Run closes the screen on return, which gives the console back.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		return err
	}
	if m, err := consoleMode(); err != nil || m != 0 {
		return fmt.Errorf("console mode after close = %d (%v), want KD_TEXT", m, err)
	}
	return nil
}

// playing is a player that plays on the spot: the test sets its position.
type playing struct {
	mu  sync.Mutex
	pos float64
}

func (p *playing) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	id, name := "f1", "Räuber Hotzenplotz"
	return player.Status{State: player.Playing, FolderID: &id, Folder: &name,
		Queue: []player.QueueItem{{ID: "t1", Title: "Kapitel 1"}}, Index: 0, Volume: 30, MaxVolume: 50,
		Position: p.pos, Duration: 300}
}

func (p *playing) Do(context.Context, player.Command) (player.Status, error) { return p.Status(), nil }

// testProgress: while a track plays, a second later only the progress area
// is copied to /dev/fb0 (a pixel marked outside it stays as marked), and
// the screen then shows the new frame.
func testProgress() error {
	fb, err := display.OpenFramebuffer("/dev/fb0", "/dev/tty0")
	if err != nil {
		return err
	}
	defer fb.Close()
	p := &playing{pos: 10.5}
	d, err := display.New(display.Options{Player: p, Screen: fb})
	if err != nil {
		return err
	}
	if _, err := d.Snapshot(context.Background()); err != nil {
		return err
	}
	stride, err := sysfsInt("stride")
	if err != nil {
		return err
	}
	dev, err := os.OpenFile("/dev/fb0", os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer dev.Close()
	mark := []byte{1, 2, 3, 4} // top left, far from the progress bar
	if _, err := dev.WriteAt(mark, 0); err != nil {
		return fmt.Errorf("mark: %w", err)
	}
	p.mu.Lock()
	p.pos = 11.5
	p.mu.Unlock()
	frame, err := d.Snapshot(context.Background())
	if err != nil {
		return err
	}
	raw := make([]byte, stride*frame.Rect.Dy())
	if _, err := dev.ReadAt(raw, 0); err != nil {
		return fmt.Errorf("read back: %w", err)
	}
	if string(raw[:4]) != string(mark) {
		return errors.New("a pixel outside the progress area was copied again")
	}
	bad := 0
	for y := 0; y < frame.Rect.Dy(); y++ {
		for x := 0; x < frame.Rect.Dx(); x++ {
			if x == 0 && y == 0 {
				continue
			}
			i := y*stride + x*4
			s := frame.Pix[frame.PixOffset(x, y):]
			if raw[i] != s[2] || raw[i+1] != s[1] || raw[i+2] != s[0] {
				bad++
			}
		}
	}
	if bad != 0 {
		return fmt.Errorf("%d pixels on /dev/fb0 differ from the frame after the progress moved", bad)
	}
	return nil
}

// testTouch creates a touch screen through uinput, lets OpenTouch find it
// (auto), taps the play button of the now-playing screen and expects the
// toggle command at the player.
func testTouch() error {
	dev, err := evdev.CreateDevice("storybox test touch", evdev.InputID{BusType: 0x06, Vendor: 1, Product: 1},
		map[evdev.EvType][]evdev.EvCode{
			evdev.EV_KEY: {evdev.BTN_TOUCH},
			evdev.EV_ABS: {evdev.ABS_X, evdev.ABS_Y},
		})
	if err != nil {
		return fmt.Errorf("uinput: %w", err)
	}
	defer evdev.DestroyDevice(dev)
	time.Sleep(300 * time.Millisecond) // udev-less: the node appears through devtmpfs

	size := image.Pt(display.DefaultWidth, display.DefaultHeight)
	touch, err := display.OpenTouch("auto", size, display.TouchOptions{})
	if err != nil {
		return err
	}
	p := &still{cmds: make(chan player.Command, 4)}
	d, err := display.New(display.Options{Player: p, Touch: touch})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	time.Sleep(300 * time.Millisecond) // first frame drawn, reader waiting

	// The play button of the paused screen is near (569, 276) at 800×480;
	// the paused folder opens on home, so tap "now playing" first.
	write := func(evs ...evdev.InputEvent) error {
		for _, e := range evs {
			if err := dev.WriteOne(&e); err != nil {
				return err
			}
		}
		return nil
	}
	tap := func(x, y int32) error {
		return write(
			evdev.InputEvent{Type: evdev.EV_ABS, Code: evdev.ABS_X, Value: x},
			evdev.InputEvent{Type: evdev.EV_ABS, Code: evdev.ABS_Y, Value: y},
			evdev.InputEvent{Type: evdev.EV_KEY, Code: evdev.BTN_TOUCH, Value: 1},
			evdev.InputEvent{Type: evdev.EV_SYN, Code: evdev.SYN_REPORT},
			evdev.InputEvent{Type: evdev.EV_KEY, Code: evdev.BTN_TOUCH, Value: 0},
			evdev.InputEvent{Type: evdev.EV_SYN, Code: evdev.SYN_REPORT},
		)
	}
	if err := tap(752, 40); err != nil { // header: now playing
		return err
	}
	time.Sleep(300 * time.Millisecond)
	if err := tap(569, 276); err != nil { // play/pause
		return err
	}
	select {
	case c := <-p.cmds:
		if c.Action != player.ActToggle {
			return fmt.Errorf("got %+v, want toggle", c)
		}
	case <-time.After(10 * time.Second):
		return errors.New("no command reached the player")
	}
	return nil
}
