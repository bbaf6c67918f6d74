// Command pi boots the flashable Raspberry Pi image (make image) on qemu's
// own model of the Pi 3 B (raspi3b: BCM2837, its SD host, framebuffer,
// mini-UART and DWC2 USB controller) with the Zero 2 W's 512 MB, and checks
// the box through its own interfaces (run by make test-pi; board/README.md
// says what this proves):
//
//   - the API answers over a USB Ethernet adapter (usb-net), and when;
//   - the home screen is on the Pi's framebuffer, pixel for pixel what the
//     box says it shows (GET /api/display/screenshot), and since when;
//   - a folder played to a USB sound card (usb-audio, recorded by qemu)
//     comes out sample for sample, and volume and pause act on it;
//   - a USB keyboard typing a card's digits and Enter, as a 125 kHz reader
//     does, starts the folder the card is mapped to;
//   - with a 10,000-track library and music playing, the memory each
//     service holds and the memory left.
//
// The image is not modified: the test boots a sparse copy, grown to a size
// qemu's SD card takes, with files added to /perm (the measuring track and
// the library), as a parent adds music. The kernel command line is the
// image's own plus what a user could write into cmdline.txt (see qemuGaps).
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// qemuGaps are the kernel arguments that keep qemu 7.2's raspi3b from
// resetting the board; each turns off a driver for a block qemu models too
// little, nothing the box uses there:
//
//   - bcm2835_wdt: qemu's power-management block resets the board the
//     moment the watchdog is armed (a real BCM2835 counts down its WDOG
//     ticks first); gokrazy's init arms it at once, and qemu's model then
//     cannot boot the kernel again.
//   - vchiq: qemu does not answer the firmware's VCHIQ_INIT request, and
//     the Pi kernel's vchiq driver, failing its probe, leaves its slot
//     thread running on the memory it frees: an Oops (most boots), a panic
//     (oops=panic), a reset. VCHIQ carries the onboard audio, which qemu
//     does not model either.
var qemuGaps = []string{"initcall_blacklist=bcm2835_wdt_driver_init,vchiq_driver_init"}

type config struct {
	image, work, dtb, mem, secrets, host string
	boot, silence                        time.Duration
	// The household figures (household.go): this program for arm64 as
	// the probe, the second box's syncd and Syncthing.
	household                       bool
	probe, peerSyncd, peerSyncthing string
}

func main() {
	var c config
	flag.StringVar(&c.image, "image", "build/image/storybox.img", "the image make image built")
	flag.StringVar(&c.work, "work", "build/pi-vm", "working directory: SD card copy, recordings, logs")
	flag.StringVar(&c.dtb, "dtb", "bcm2710-rpi-3-b.dtb", "device tree from the image's boot partition")
	flag.StringVar(&c.mem, "mem", "512M", "memory the kernel may use (mem=): the Zero 2 W's 512 MB")
	flag.StringVar(&c.secrets, "secrets", "gokrazy-instance/.secrets", "where make image keeps gokrazy's update password and web interface certificate")
	flag.StringVar(&c.host, "host", "storybox", "the image's host name (its web interface certificate's directory)")
	flag.DurationVar(&c.boot, "timeout", 15*time.Minute, "bound on each wait for the box (TCG on a busy machine is slow)")
	flag.DurationVar(&c.silence, "hang", 4*time.Minute, "a boot whose console is silent this long before the API answers has hung: the board is power-cycled once")
	flag.BoolVar(&c.household, "household", false, "instead of the checks, measure Syncthing on the board with a second box (run in a network namespace whose only interface is loopback)")
	flag.StringVar(&c.probe, "probe-binary", "", "with -household: this program built for linux/arm64, run on the board to read Syncthing's memory and CPU")
	flag.StringVar(&c.peerSyncd, "peer-syncd", "", "with -household: the second box's syncd (built for this machine)")
	flag.StringVar(&c.peerSyncthing, "peer-syncthing", "", "with -household: the second box's Syncthing (built from the image's pin)")
	asProbe := flag.Bool("probe", false, "run as the probe on the board (the test starts it there)")
	flag.Parse()
	if *asProbe {
		probe()
	}
	if c.household && (c.probe == "" || c.peerSyncd == "" || c.peerSyncthing == "") {
		fmt.Fprintln(os.Stderr, "test-pi: -household needs -probe-binary, -peer-syncd and -peer-syncthing")
		os.Exit(2)
	}
	if err := run(c); err != nil {
		fmt.Fprintln(os.Stderr, "test-pi: FAIL:", err)
		os.Exit(1)
	}
	fmt.Println("test-pi: PASS")
}

func say(format string, args ...any) { fmt.Printf("test-pi: "+format+"\n", args...) }

// waitFor polls cond every interval until it says done, fails, the machine
// stops or bound passes.
func (m *machine) waitFor(what string, bound, interval time.Duration, cond func() (bool, error)) error {
	deadline := time.Now().Add(bound)
	for {
		done, err := cond()
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if done {
			return nil
		}
		if !m.running() {
			return fmt.Errorf("%s: qemu exited (%v)", what, m.err)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not within %v", what, bound)
		}
		time.Sleep(interval)
	}
}

func run(c config) error {
	if err := os.MkdirAll(c.work, 0o755); err != nil {
		return err
	}
	work, err := filepath.Abs(c.work)
	if err != nil {
		return err
	}
	pwRaw, err := os.ReadFile(filepath.Join(c.secrets, "gokrazy", "http-password.txt"))
	if err != nil {
		return fmt.Errorf("gokrazy's update password (make image writes it): %v", err)
	}
	// The web interface speaks TLS only, with the instance's own
	// certificate (docs/image.md): the test pins it, as make update does.
	cert, err := os.ReadFile(filepath.Join(c.secrets, "gokrazy", "hosts", c.host, "cert.pem"))
	if err != nil {
		return fmt.Errorf("gokrazy's web interface certificate (make image makes it): %v", err)
	}
	t := time.Now()
	files, err := testFiles(work)
	if err != nil {
		return err
	}
	if c.household {
		if _, err := os.Stat(c.probe); err != nil {
			return fmt.Errorf("the probe (this program built for arm64): %v", err)
		}
		files[strings.TrimPrefix(probeOnPerm, "perm/")] = c.probe
	}
	card := filepath.Join(work, "sd.img")
	if err := sdCard(c.image, card, files); err != nil {
		return err
	}
	b, err := fromBootPartition(c.image, c.dtb, work)
	if err != nil {
		return err
	}
	say("SD card: copy of %s with %d files added to /perm (%s, %d-track library) in %.1f s",
		c.image, len(files), measuringDir, libraryTracks, time.Since(t).Seconds())

	pw := strings.TrimSpace(string(pwRaw))
	for boot := 1; ; boot++ {
		s, err := powerOn(c, work, card, b, pw, cert)
		if err == nil {
			err = s.checks()
		}
		var hang *hangError
		if errors.As(err, &hang) && boot < maxBoots {
			// Whose fault is not known yet (hangError): the test says what
			// it saw, pulls the plug as a parent would, and runs every
			// check again on a fresh card; a second hang fails.
			say("boot %d hung: %v", boot, hang)
			s.explain()
			s.m.kill()
			say("power cycle: boot %d of at most %d, on a fresh copy of the card", boot+1, maxBoots)
			if err := sdCard(c.image, card, files); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			if s != nil {
				s.explain()
				s.m.kill()
			}
			return err
		}
		defer s.m.kill()
		if err := s.m.quit(); err != nil {
			return err
		}
		if c.household {
			return nil
		}
		return s.judgeSound(s.speaker)
	}
}

// maxBoots bounds the power cycles a hung boot gets (hangError).
const maxBoots = 2

// powerOn starts the board on card and returns the session that checks it.
func powerOn(c config, work, card string, b boot, password string, cert []byte) (*session, error) {
	apiPort, err1 := freePort()
	uiPort, err2 := freePort()
	syncPort, err3 := freePort()
	if err1 != nil || err2 != nil || err3 != nil || apiPort == uiPort || syncPort == apiPort || syncPort == uiPort {
		return nil, fmt.Errorf("no free ports: %v %v %v", err1, err2, err3)
	}
	if !c.household {
		syncPort = 0
	}
	vm := vmConfig{
		card: card, dir: work, boot: b, apiPort: apiPort, uiPort: uiPort, syncPort: syncPort,
		extraCmdline: append([]string{"console=ttyS0,115200", "mem=" + c.mem}, qemuGaps...),
		speaker:      filepath.Join(work, "usb-speaker.wav"),
		serial:       filepath.Join(work, "serial.log"),
	}
	os.Remove(vm.speaker)
	say("booting %s on raspi3b: %s", filepath.Base(b.kernel), strings.Join(append([]string{b.cmdline}, vm.extraCmdline...), " "))
	at := time.Now()
	m, err := start(vm)
	if err != nil {
		return nil, err
	}
	bx, err := newBox(apiPort, uiPort, password, cert)
	if err != nil {
		m.kill()
		return nil, err
	}
	return &session{c: c, work: work, m: m, box: bx, powerOn: at, serial: vm.serial, speaker: vm.speaker, syncPort: syncPort}, nil
}
