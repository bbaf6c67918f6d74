package main

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/library"
)

// session is one boot and the checks run on it, in order.
type session struct {
	c       config
	work    string
	m       *machine
	box     *box
	powerOn time.Time
	serial  string
	speaker string // qemu's recording of the USB sound card
	// syncPort is the loopback port forwarded to the board's Syncthing
	// (household figures only).
	syncPort int

	mu           sync.Mutex // frames; one screendump at a time
	frames       []shot     // the distinct screens seen, in order
	stopWatching func()     // once the home screen is found
	home         frame      // the home screen as the box rendered it

	measured      string // the measuring folder's id
	played        int    // tries of the measuring play
	quieterVolume int
}

// shot is a screen and when it was first seen.
type shot struct {
	at time.Duration // since power-on
	fr frame
}

func (s *session) since() time.Duration { return time.Since(s.powerOn) }

// look takes a screendump and keeps it if the screen changed.
func (s *session) look() (frame, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.work, "screen.ppm")
	at := s.since()
	if err := s.m.screendump(path); err != nil {
		return frame{}, err
	}
	fr, err := readPPM(path)
	if err != nil {
		return frame{}, err
	}
	if n := len(s.frames); n == 0 || differ(s.frames[n-1].fr, fr) != 0 {
		s.frames = append(s.frames, shot{at, fr})
	}
	return fr, nil
}

// watch looks at the screen four times a second until stop is closed (the
// home screen found), so its first frame is seen whatever else the test
// waits for.
func (s *session) watch(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-time.After(250 * time.Millisecond):
		}
		if _, err := s.look(); err != nil && s.m.running() {
			say("screendump: %v", err)
			return
		}
	}
}

func (s *session) checks() error {
	stop := make(chan struct{})
	s.stopWatching = sync.OnceFunc(func() { close(stop) })
	defer s.stopWatching()
	go s.watch(stop)
	steps := []func() error{s.bootToAPI, s.bootToScreen, s.scanned, s.sound, s.card, s.memory}
	if s.c.household {
		s.stopWatching()
		steps = []func() error{s.bootToAPI, s.scanned, s.householdFigures}
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// bootToAPI watches the screen and waits for the API's first healthy answer.
func (s *session) bootToAPI() error {
	var health struct{ Status string }
	// Until the guest has its address, qemu accepts the connection and
	// holds it: each try gets a short timeout.
	quick := &box{api: s.box.api, client: &http.Client{Timeout: 2 * time.Second}}
	console := s.consoleProgress()
	err := s.m.waitFor("the API over usb-net", s.c.boot, 250*time.Millisecond, func() (bool, error) {
		if quick.get("/api/health", &health) == nil && health.Status == "ok" {
			return true, nil
		}
		if silent := console(); silent > s.c.silence {
			return false, &hangError{at: s.since(), silent: silent, cpus: s.m.cpuStates()}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	say("power-on → API: %.1f s (first {\"status\":\"ok\"} from GET /api/health through the USB Ethernet adapter)", s.since().Seconds())
	s.timeline()
	return nil
}

// hangError is a boot that stopped before the API answered: the console
// silent for longer than any boot is (a boot prints to it every few seconds
// until its services listen), the API not answering. Seen once, in CI on
// 2026-11-27: the console stopped 6.6 s into the boot, right after the USB
// sound card enumerated, and nothing came in 15 minutes; not reproduced on
// the 2-core build machine in 27 boots, 18 of them three at a time and 8
// two at a time. What the processors were doing is printed, so the next
// one says more.
type hangError struct {
	at, silent time.Duration
	cpus       string // cpuStates
}

func (h *hangError) Error() string {
	return fmt.Sprintf("%.0f s after power-on, no API and the console silent for %.0f s; the processors (qemu's monitor, twice, 2 s apart):\n%s",
		h.at.Seconds(), h.silent.Seconds(), h.cpus)
}

// consoleProgress returns a function that says how long the serial console
// has been silent.
func (s *session) consoleProgress() func() time.Duration {
	size, since := int64(-1), time.Now()
	return func() time.Duration {
		if st, err := os.Stat(s.serial); err == nil && st.Size() != size {
			size, since = st.Size(), time.Now()
		}
		return time.Since(since)
	}
}

// timeline prints where the boot's time went, on the guest's clock (which
// starts with the kernel): the kernel until init, gokrazy until playerd
// starts, playerd until it draws and serves, DHCP on the USB adapter.
func (s *session) timeline() {
	var marks []string
	if b, err := os.ReadFile(s.serial); err == nil {
		if m := kernelMark.FindSubmatch(b); m != nil {
			marks = append(marks, "init started "+string(m[1])+" s")
		}
	}
	for _, l := range strings.Split(s.box.serviceLog("playerd"), "\n") {
		for _, w := range []struct{ has, name string }{{"attempt 0, starting", "playerd started"}, {`msg=framebuffer`, "first frame drawn"}, {`msg="playerd ready"`, "playerd serving"}} {
			if strings.Contains(l, w.has) {
				if t := guestClock(l); t != "" {
					marks = append(marks, w.name+" "+t+" s")
				}
			}
		}
	}
	for _, l := range strings.Split(s.box.serviceLog("/gokrazy/dhcp"), "\n") {
		if strings.Contains(l, "10.0.2.15") {
			if t := guestClock(l); t != "" {
				marks = append(marks, "DHCP address on eth0 "+t+" s")
				break
			}
		}
	}
	say("boot on the guest's clock: %s", strings.Join(marks, ", "))
}

var (
	memoryLimit = regexp.MustCompile(`memory_limit=([0-9]+)MiB`)
	kernelMark  = regexp.MustCompile(`\[\s*([0-9.]+)\] Run /gokrazy/init`)
	// gokrazy's log lines (1970/01/01 00:00:12) and slog's
	// (1970-01-01T00:00:14.867Z): the clock starts at the epoch with the
	// kernel, as the Pi has no clock of its own.
	clockMark = regexp.MustCompile(`1970.01.01[T ]([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)`)
)

// guestClock reads the time in a log line as seconds since the kernel
// started ("" when the line has none).
func guestClock(line string) string {
	m := clockMark.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	var h, min int
	var sec float64
	fmt.Sscan(m[1], &h)
	fmt.Sscan(m[2], &min)
	fmt.Sscan(m[3], &sec)
	return fmt.Sprintf("%.1f", float64(h*3600+min*60)+sec)
}

// bootToScreen waits until the framebuffer shows, pixel for pixel, what the
// box says its screen shows, and finds when that screen first appeared.
func (s *session) bootToScreen() error {
	var diff int
	err := s.m.waitFor("the home screen on the framebuffer", s.c.boot, 500*time.Millisecond, func() (bool, error) {
		png, err := s.box.raw("/api/display/screenshot")
		if err != nil {
			return false, err
		}
		want, err := fromPNG(png)
		if err != nil {
			return false, err
		}
		got, err := s.look()
		if err != nil {
			return false, err
		}
		if diff = differ(got, want); diff != 0 {
			return false, nil
		}
		s.home = want
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("%w (%d pixels differ from GET /api/display/screenshot)", err, diff)
	}
	s.stopWatching()
	s.mu.Lock()
	defer s.mu.Unlock()
	first := s.frames[len(s.frames)-1].at
	for _, sh := range s.frames {
		if differ(sh.fr, s.home) == 0 {
			first = sh.at
			break
		}
	}
	console := time.Duration(-1)
	for _, sh := range s.frames {
		if slices.ContainsFunc(sh.fr.pix, func(p uint16) bool { return p != 0 }) {
			console = sh.at
			break
		}
	}
	say("power-on → home screen on the framebuffer: %.1f s (the first screendump equal, in RGB565, to GET /api/display/screenshot; %d distinct screens before, the first lit one, the kernel's console, at %.1f s)",
		first.Seconds(), len(s.frames)-1, console.Seconds())
	return nil
}

// scanned waits for the first scan of the library on /perm to finish.
func (s *session) scanned() error {
	var info struct {
		Library struct {
			Scanned bool
			Folders int
			Tracks  int
		}
	}
	err := s.m.waitFor("the first library scan", s.c.boot, time.Second, func() (bool, error) {
		if err := s.box.get("/api/info", &info); err != nil {
			return false, err
		}
		return info.Library.Scanned, nil
	})
	if err != nil {
		return err
	}
	if info.Library.Tracks < libraryTracks {
		return fmt.Errorf("the library has %d tracks, want the %d added to /perm and more", info.Library.Tracks, libraryTracks)
	}
	say("library scanned by %.1f s after power-on: %d folders, %d tracks", s.since().Seconds(), info.Library.Folders, info.Library.Tracks)
	return nil
}

// soundTries bounds the plays of the measuring track. A try is repeated
// when the box reported that its audio device failed or the recording lost
// frames: a TCG guest the host starves can stall its USB audio past ALSA's
// timeout, and qemu's emulated USB controller then drops isochronous
// packets; neither says anything about the box. The last try must be
// whole.
const soundTries = 5

// sound plays the measuring track at full scale, turns it down and pauses
// it; the recording is judged after qemu quits (judgeSound), the last try's
// play.
func (s *session) sound() error {
	// Normalisation off: the recording is held to the track bit for bit,
	// which a loudness gain on top would change.
	if err := s.box.call("PUT", "/api/admin/settings", map[string]any{"audio": map[string]any{"max_volume": 100, "normalize": "off"}}, nil); err != nil {
		return err
	}
	// Folder ids are the box's documented hash of the folder's path (GET
	// /api/library would list all 10,000 tracks, which takes TCG long).
	s.measured, s.quieterVolume = library.ID(strings.TrimPrefix(measuringDir, "media/")), 70
	for s.played = 1; ; s.played++ {
		before := strings.Count(s.box.serviceLog("playerd"), `msg="audio output"`)
		pv, pp, devErr, err := s.playMeasuring()
		if err != nil {
			return err
		}
		if devErr == "" && strings.Count(s.box.serviceLog("playerd"), `msg="audio output"`) > before {
			devErr = "playerd logged an audio output error"
		}
		// What the device played so far (the final judgement, with the
		// pause's fade, follows when qemu has written everything).
		if devErr == "" {
			if rec, err := readRecording(s.speaker); err != nil {
				return err
			} else if _, err := judgeSegment(rec, signal(), s.quieterVolume); err != nil && err != errUnfinished {
				devErr = "the recording: " + err.Error()
			}
		}
		if devErr == "" {
			say("measuring track (48 kHz): played at volume 100, turned to %d at %.2f s, paused at %.2f s (try %d)", s.quieterVolume, pv, pp, s.played)
			return nil
		}
		if s.played == soundTries {
			return fmt.Errorf("no play of %d came through whole, the last: %s", soundTries, devErr)
		}
		say("try %d: %s; playing again", s.played, devErr)
	}
}

// playMeasuring plays the measuring folder from its start at volume 100,
// turns it down after 2 s of it and pauses 1.5 s later (short, so a
// stalled guest is less likely to spoil a try); it returns the
// positions at which the box took the two commands, or what the box said
// when its audio device failed meanwhile.
func (s *session) playMeasuring() (atVolume, atPause float64, devErr string, err error) {
	if err := s.box.command(map[string]any{"action": "volume", "value": 100}); err != nil {
		return 0, 0, "", err
	}
	if err := s.box.command(map[string]any{"action": "folder", "folder_id": s.measured}); err != nil {
		return 0, 0, "", err
	}
	// Polled gently: every request costs the emulated CPUs time.
	at := func(pos float64) error {
		return s.m.waitFor(fmt.Sprintf("%.1f s of the measuring track", pos), s.c.boot, time.Second, func() (bool, error) {
			st, err := s.box.status()
			if err != nil {
				return false, err
			}
			if st.State == "error" && st.Error != nil {
				devErr = *st.Error
				return true, nil
			}
			if st.State == "playing" && st.FolderID != nil && *st.FolderID == s.measured && st.Position >= pos {
				atVolume, atPause = atPause, st.Position
				return true, nil
			}
			return false, nil
		})
	}
	if err := at(2); err != nil || devErr != "" {
		return 0, 0, devErr, err
	}
	if err := s.box.command(map[string]any{"action": "volume", "value": s.quieterVolume}); err != nil {
		return 0, 0, "", err
	}
	if err := at(atPause + 1.5); err != nil || devErr != "" {
		return 0, 0, devErr, err
	}
	if err := s.box.command(map[string]any{"action": "pause"}); err != nil {
		return 0, 0, "", err
	}
	err = s.m.waitFor("the pause", time.Minute, 500*time.Millisecond, func() (bool, error) {
		st, err := s.box.status()
		if err == nil && st.State == "error" && st.Error != nil {
			devErr = *st.Error
		}
		return err == nil && st.State != "playing", err
	})
	return atVolume, atPause, devErr, err
}

// judgeSound reads qemu's recording of the USB sound card.
func (s *session) judgeSound(path string) error {
	rec, err := readRecording(path)
	if err != nil {
		return err
	}
	h, err := judgeSegment(rec, signal(), s.quieterVolume)
	if err != nil {
		return fmt.Errorf("the USB sound card's recording (%s, %.1f s): %w", path, float64(len(rec))/signalRate, err)
	}
	lost := "no frame missing"
	if len(h.gaps) > 0 {
		lost = fmt.Sprintf("frames missing in %d gaps of %v frames (packets qemu's emulated USB dropped; each at most %d)", len(h.gaps), h.gaps, maxGap)
	}
	say("usb-audio recording: %d frames bit for bit the file at volume 100, a %d-frame ramp, %d frames at volume %d (each within one step of the file × %.4f), then a fade-out to silence at the pause; in order, none repeated, %s",
		h.full, h.ramp, h.quieter, s.quieterVolume, gainFor(s.quieterVolume), lost)
	return nil
}

// A card a 125 kHz EM4100 reader types as ten digits and Enter, and the
// demo folder it starts.
const (
	cardID     = "0004921380"
	cardFolder = "Musik/Kinderlieder"
)

// card makes qemu's USB keyboard a card reader (as a parent does for a
// reader the box does not know), maps a card to a folder and types it.
func (s *session) card() error {
	var input struct {
		Wiring struct {
			Readers []map[string]string `json:"readers"`
		} `json:"wiring"`
		Status struct {
			Devices []struct{ Name, Vendor, Product, Role string } `json:"devices"`
		} `json:"status"`
	}
	if err := s.box.get("/api/admin/input", &input); err != nil {
		return err
	}
	readers := append(input.Wiring.Readers, map[string]string{"vendor": "0627", "product": "0001"}) // QEMU USB Keyboard
	if err := s.box.call("PUT", "/api/admin/input", map[string]any{"readers": readers}, nil); err != nil {
		return err
	}
	err := s.m.waitFor("qemu's keyboard claimed as a card reader", time.Minute, 500*time.Millisecond, func() (bool, error) {
		if err := s.box.get("/api/admin/input", &input); err != nil {
			return false, err
		}
		for _, d := range input.Status.Devices {
			if d.Vendor == "0627" && d.Product == "0001" && d.Role == "reader" {
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	folder := library.ID(cardFolder)
	if err := s.box.call("PUT", "/api/admin/cards/"+cardID, map[string]string{"action": "folder", "folder_id": folder, "name": "Testkarte"}, nil); err != nil {
		return err
	}
	keys := append(strings.Split(cardID, ""), "ret")
	for try := 1; ; try++ {
		type read struct{ ID, Outcome, At string }
		var before []read
		if err := s.box.get("/api/admin/cards/reads", &before); err != nil {
			return err
		}
		typed := s.since()
		if err := s.m.typeKeys(keys...); err != nil {
			return err
		}
		var wrong string
		err = s.m.waitFor("the card's folder playing", time.Minute, 500*time.Millisecond, func() (bool, error) {
			var reads []read
			if err := s.box.get("/api/admin/cards/reads", &reads); err != nil {
				return false, err
			}
			if len(reads) > 0 && (len(before) == 0 || reads[0].At != before[0].At) && reads[0].ID != cardID {
				wrong = reads[0].ID
				return true, nil
			}
			st, err := s.box.status()
			return err == nil && st.State == "playing" && st.FolderID != nil && *st.FolderID == folder, err
		})
		if err != nil {
			return err
		}
		if wrong == "" {
			say("card %s typed on the USB keyboard (as a 125 kHz reader): folder %s playing %.1f s after the first key (try %d)",
				cardID, cardFolder, (s.since() - typed).Seconds(), try)
			return nil
		}
		// qemu's USB keyboard keeps 16 key events; a guest the host starves
		// longer than that polls too late and keys are lost on the way.
		if try == cardTries {
			return fmt.Errorf("the box read %q for the typed card %s in each of %d tries", wrong, cardID, cardTries)
		}
		say("try %d: the box read %q, not the typed %s (keys lost in qemu's keyboard queue); typing again", try, wrong, cardID)
	}
}

// cardTries bounds the typing of the card.
const cardTries = 3

// memory reads, with the 10,000-track library scanned and music playing,
// what each service holds and what the box has left, and checks them
// against the budget (docs/performance.md, A Pi Zero 2 W on the board).
func (s *session) memory() error {
	err := s.m.waitFor("5 s of music", time.Minute, 500*time.Millisecond, func() (bool, error) {
		st, err := s.box.status()
		return err == nil && st.State == "playing" && st.Position >= 5, err
	})
	if err != nil {
		return err
	}
	mem, err := s.box.memory()
	if err != nil {
		return err
	}
	var parts []string
	for _, svc := range []string{"init", "/user/playerd", "/user/netd", "/user/hatd", "/gokrazy/dhcp", "/gokrazy/ntp", "/gokrazy/randomd"} {
		if n, ok := mem.rss[svc]; ok {
			parts = append(parts, fmt.Sprintf("%s %.1f MB", filepath.Base(svc), float64(n)/1e6))
		}
	}
	say("memory with the %d-track library and music playing: MemTotal %.0f MB, MemAvailable %.0f MB, ram_percent %.1f; RSS %s",
		libraryTracks, float64(mem.total)/1e6, float64(mem.available)/1e6, mem.ramPercent, strings.Join(parts, ", "))
	playerd, ok := mem.rss["/user/playerd"]
	if !ok {
		return fmt.Errorf("gokrazy lists no RSS for playerd: %v", mem.rss)
	}
	// The limit playerd runs with, as it logged it at start (GOMEMLIMIT
	// from the instance's config.json).
	m := memoryLimit.FindStringSubmatch(s.box.serviceLog("playerd"))
	if m == nil {
		return errors.New("playerd's start-up line names no memory_limit (GOMEMLIMIT not set in the image?)")
	}
	limit, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return err
	}
	say("playerd runs with GOMEMLIMIT %d MiB and holds %.0f %% of it", limit, float64(playerd)/float64(limit<<20)*100)
	if playerd > limit<<20 {
		return fmt.Errorf("playerd holds %d bytes, more than its GOMEMLIMIT (%d MiB)", playerd, limit)
	}
	if mem.available < mem.total/2 {
		return fmt.Errorf("only %d of %d bytes available: the box uses more than half its memory", mem.available, mem.total)
	}
	return nil
}

// explain prints what a person needs after a failure: the console, the
// box's own log, the last screen.
func (s *session) explain() {
	if b, err := os.ReadFile(s.serial); err == nil {
		fmt.Fprintf(os.Stderr, "---- last lines of the serial console (%s) ----\n%s\n", s.serial, lastLines(string(b), 40))
		// The next boot's console starts this file again.
		os.WriteFile(strings.TrimSuffix(s.serial, ".log")+"-"+s.powerOn.Format("150405")+".log", b, 0o644)
	}
	if s.m.running() {
		fmt.Fprintf(os.Stderr, "---- playerd's log (gokrazy) ----\n%s\n", lastLines(s.box.serviceLog("playerd"), 20))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.frames); n > 0 {
		path := filepath.Join(s.work, "last-screen.png")
		if err := s.frames[n-1].fr.savePNG(path); err == nil {
			fmt.Fprintf(os.Stderr, "last screen: %s\n", path)
		}
	}
}
