//go:build linux

// Command alsa is the /init of the ALSA integration VMs (run.sh boots them).
// It drives output, player, library and decode from above, so it lives here
// rather than under the packages it tests. With snd-aloop it plays known
// audio through the ALSA sink, captures it from the loopback's other end and
// checks it arrived sample for sample, then runs the player engine. With
// storybox.device=usb on the kernel command line it runs the engine on qemu's
// usb-audio device instead (usb.go); with storybox.device=headphones the
// loopback is the speaker and qemu's usb-audio device, plugged in and pulled
// out by the host during the run, the headphones (headphones.go). With
// storybox.case=measure it plays on snd-aloop while the background loudness
// measurement works through a library of 1,000 tracks (measure.go). It prints
// one RESULT line per case on the console and powers the VM off. On the
// host, its check-speaker and check-headphones judge qemu's recordings, and
// hotplug works qemu's monitor for the headphones run.
package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gopxl/beep/v2"
	"golang.org/x/sys/unix"

	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// modules load in this order (each needs the ones before it).
var modules = []string{"soundcore", "snd", "snd-timer", "snd-pcm", "snd-aloop"}

const (
	playNode    = "/dev/snd/pcmC0D0p" // loopback: what is played on device 0 ...
	captureNode = "/dev/snd/pcmC0D1c" // ... is captured on device 1
	drainTail   = 2 * output.PeriodFrames
)

func main() {
	if len(os.Args) == 5 && os.Args[1] == "check-speaker" { // on the host, see usb.go
		ptv, err := strconv.ParseFloat(os.Args[3], 64)
		ptp, err2 := strconv.ParseFloat(os.Args[4], 64)
		if err = errors.Join(err, err2); err == nil {
			var detail string
			if detail, err = checkSpeaker(os.Args[2], ptv, ptp); err == nil {
				fmt.Println("speaker: ok", detail)
				return
			}
		}
		fmt.Println("speaker: FAIL", err)
		os.Exit(1)
	}
	if len(os.Args) == 4 && os.Args[1] == "hotplug" { // on the host, see hotplug.go
		if err := hotplug(os.Args[2], os.Args[3]); err != nil {
			fmt.Println("hotplug: FAIL", err)
			os.Exit(1)
		}
		return
	}
	if len(os.Args) == 4 && os.Args[1] == "check-headphones" {
		played, err := strconv.ParseFloat(os.Args[3], 64)
		if err == nil {
			var detail string
			if detail, err = checkHeadphones(os.Args[2], played); err == nil {
				fmt.Println("headphones: ok", detail)
				return
			}
		}
		fmt.Println("headphones: FAIL", err)
		os.Exit(1)
	}
	fmt.Println("vmtest: start")
	if mode, err := setup(); err != nil {
		fmt.Printf("RESULT setup FAIL %v\n", err)
	} else if mode == "usb" {
		report("usb-engine", runUSB)
	} else if mode == "headphones" {
		report("headphones", runHeadphones)
	} else if kernelParam("storybox.case") == "measure" {
		report("measure", runMeasure)
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

// setup mounts the kernel's file systems and loads the sound modules for the
// mode on the kernel command line: snd-aloop, USB (storybox.device=usb), or
// both (storybox.device=headphones: the loopback is the speaker, the USB
// device comes later).
func setup() (mode string, err error) {
	for _, m := range []struct{ src, dst, fs string }{{"proc", "/proc", "proc"}, {"sysfs", "/sys", "sysfs"}, {"devtmpfs", "/dev", "devtmpfs"}} {
		if err := unix.Mount(m.src, m.dst, m.fs, 0, ""); err != nil {
			return "", fmt.Errorf("mount %s: %w", m.dst, err)
		}
	}
	mode = kernelParam("storybox.device")
	mods, node := modules, captureNode
	switch mode {
	case "usb":
		mods, node = usbModules, playNode
	case "headphones":
		mods = append(slices.Clone(modules), usbModules...)
	}
	for _, m := range mods {
		params := ""
		if m == "snd-aloop" {
			params = "pcm_substreams=1"
		}
		if err := loadModule(filepath.Join("/modules", m+".ko"), params); err != nil {
			return mode, err
		}
	}
	for range 200 {
		if _, err := os.Stat(node); err == nil {
			return mode, nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return mode, fmt.Errorf("no %s after loading %s", node, mods[len(mods)-1])
}

// engineRuns is how often the engine case runs: storybox.engine_runs=N on
// the kernel command line (run.sh passes $ENGINE_RUNS), else once.
func engineRuns() int {
	if n, err := strconv.Atoi(kernelParam("storybox.engine_runs")); err == nil && n > 0 {
		return n
	}
	return 1
}

// kernelParam is the value of name=value on the kernel command line.
func kernelParam(name string) string {
	cmdline, _ := os.ReadFile("/proc/cmdline")
	for _, f := range strings.Fields(string(cmdline)) {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			return v
		}
	}
	return ""
}

func loadModule(path, params string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := unix.FinitModule(int(f.Fd()), params, 0); err != nil && !errors.Is(err, unix.EEXIST) {
		return fmt.Errorf("load %s: %w", path, err)
	}
	return nil
}

type testCase struct {
	name    string
	spec    string
	cfg     alsa.Config
	play    func(s *output.ALSA) ([][2]float64, error) // returns what it sent
	starved bool                                       // expects an underrun
}

func run() {
	// The exactness cases use 16 periods: more slack when a busy host stalls
	// the VM (the kernel gives up a drain after 1.1 buffers without progress).
	// The engine cases run the player's own configuration.
	s16 := alsa.Config{Formats: []alsa.Format{alsa.S16LE}, MinPeriods: 16}
	cases := []testCase{
		{name: "pcm-s16", spec: "Loopback,0", cfg: s16, play: playKnown(2*output.DefaultRate, 0)},
		{name: "pcm-s32", spec: "Loopback,0", cfg: alsa.Config{MinPeriods: 16}, play: playKnown(2*output.DefaultRate, 0)},
		{name: "pcm-s24-3", spec: "Loopback,0", cfg: alsa.Config{Formats: []alsa.Format{alsa.S24Packed}, MinPeriods: 16}, play: playKnown(output.DefaultRate, 0)},
		{name: "beep-flac", spec: "", cfg: alsa.Config{MinPeriods: 16}, play: playFLAC("/tone.flac")},
		{name: "underrun", spec: "Loopback,0", cfg: alsa.Config{Formats: []alsa.Format{alsa.S16LE}}, play: playKnown(output.DefaultRate, 400*time.Millisecond), starved: true},
	}
	defer func() {
		type engineCase struct {
			name string
			run  func() (string, error)
		}
		engine := []engineCase{{"busy", runBusy}}
		for range engineRuns() {
			engine = append(engine, engineCase{"engine", runEngine})
		}
		for _, c := range append(engine, engineCase{"unplug", runUnplug}) {
			report(c.name, c.run)
		}
	}()
	for _, tc := range cases {
		report(tc.name, func() (string, error) { return runCase(tc) })
	}
}

// report runs a case and prints its RESULT line.
func report(name string, run func() (string, error)) {
	t0 := time.Now()
	detail, err := run()
	status := "ok"
	if err != nil {
		status, detail = "FAIL", err.Error()
	}
	fmt.Printf("RESULT %s %s %s wall=%.1fs\n", name, status, detail, time.Since(t0).Seconds())
}

// playKnown sends n frames whose 16-bit values never repeat nearby and are
// never silent, so a lost, doubled or shifted frame cannot match by chance.
// With pause > 0 it stops feeding halfway for that long: an underrun.
func playKnown(n int, pause time.Duration) func(*output.ALSA) ([][2]float64, error) {
	return func(s *output.ALSA) ([][2]float64, error) {
		sent := make([][2]float64, n)
		x := uint32(12345)
		for i := range sent {
			for c := range 2 {
				x = x*1664525 + 1013904223
				v := int16(x >> 16)
				if v == 0 {
					v = 1
				}
				sent[i][c] = float64(v) / 32767
			}
		}
		for i := 0; i < n; i += output.PeriodFrames {
			if pause > 0 && i == n/2/output.PeriodFrames*output.PeriodFrames {
				time.Sleep(pause)
			}
			if err := s.Write(sent[i:min(i+output.PeriodFrames, n)]); err != nil {
				return nil, err
			}
		}
		return sent, nil
	}
}

// renderShare is the wall time decoding and resampling took in the last
// playFLAC, as a share of the audio's duration: under 1 keeps up.
var renderShare float64

// playFLAC runs the player's chain: decoder, resampler to the device rate,
// gain, one period per Write.
func playFLAC(path string) func(*output.ALSA) ([][2]float64, error) {
	return func(s *output.ALSA) ([][2]float64, error) {
		dec, format, err := decode.Open(path)
		if err != nil {
			return nil, err
		}
		defer dec.Close()
		if format.SampleRate != 44100 {
			return nil, fmt.Errorf("%s: %d Hz, want 44100", path, format.SampleRate)
		}
		st := beep.Resample(4, format.SampleRate, output.DefaultRate, dec)
		var sent [][2]float64
		buf := make([][2]float64, output.PeriodFrames)
		var rendering time.Duration
		defer func() {
			renderShare = rendering.Seconds() / (float64(len(sent)) / output.DefaultRate)
		}()
		for {
			t0 := time.Now()
			n, ok := st.Stream(buf)
			rendering += time.Since(t0)
			for i := range buf[:n] {
				buf[i][0] *= 0.5
				buf[i][1] *= 0.5
			}
			if n > 0 {
				sent = append(sent, buf[:n]...)
				if err := s.Write(buf[:n]); err != nil {
					return nil, err
				}
			}
			if !ok {
				break
			}
		}
		if err := dec.Err(); err != nil {
			return nil, err
		}
		if len(sent) < 95000 {
			return nil, fmt.Errorf("decoded only %d frames", len(sent))
		}
		return sent, nil
	}
}

func runCase(tc testCase) (string, error) {
	rec, err := startCapture(tc.cfg)
	if err != nil {
		return "", err
	}
	defer rec.stop()
	sink, err := output.OpenALSA("/proc/asound", tc.spec, tc.cfg)
	if err != nil {
		return "", err
	}
	sent, err := tc.play(sink)
	if err == nil {
		err = sink.Drain()
	}
	underruns, format, rate := sink.Underruns(), sink.DeviceFormat(), sink.Rate()
	if cerr := sink.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	time.Sleep(300 * time.Millisecond) // let the capture catch up with the end
	got, err := rec.stop()
	if err != nil {
		return "", err
	}
	if rate != output.DefaultRate {
		return "", fmt.Errorf("device rate %d", rate)
	}
	want := make([][2]int32, len(sent))
	for i, fr := range sent {
		for c := range 2 {
			switch format {
			case alsa.S32LE:
				want[i][c] = output.ToS32(fr[c])
			case alsa.S24LE, alsa.S24Packed:
				want[i][c] = output.ToS32(fr[c]) >> 8
			default:
				want[i][c] = int32(output.ToS16(fr[c]))
			}
		}
	}
	m := compare(want, got)
	detail := fmt.Sprintf("format=%s frames=%d exact=%d drain-tail=%d/%d gaps-before=%v replays=%d underruns=%d",
		format, len(want), m.matched, m.tail, len(want)-m.matched, m.gapAt, m.replays, underruns)
	if renderShare > 0 {
		detail += fmt.Sprintf(" render=%.0f%%-of-realtime", 100*renderShare)
		renderShare = 0
	}
	switch {
	case m.err != nil:
		return "", fmt.Errorf("%s: %w", detail, m.err)
	case m.replays > underruns:
		return "", fmt.Errorf("%s: replayed audio without an underrun", detail)
	case tc.starved && (underruns == 0 || len(m.gapAt) == 0):
		return "", fmt.Errorf("%s: starving the device caused no underrun and gap", detail)
	}
	return detail, nil
}

// runBusy opens the device twice: the second open must fail at once (not
// wait for the first to close) and say which device is busy.
func runBusy() (string, error) {
	first, err := output.OpenALSA("/proc/asound", "", alsa.Config{})
	if err != nil {
		return "", err
	}
	defer first.Close()
	second, err := output.OpenALSA("/proc/asound", "Loopback,0", alsa.Config{})
	if err == nil {
		second.Close()
		return "", errors.New("the device opened twice")
	}
	if !strings.Contains(err.Error(), "busy") || !strings.Contains(err.Error(), "hw:0,0 (Loopback)") {
		return "", fmt.Errorf("error %q should say the device is busy and name it", err)
	}
	return fmt.Sprintf("error=%q", err), nil
}

type match struct {
	matched int   // frames before the drain tail, all of them when err is nil
	gapAt   []int // sent frames that came after inserted silence or replay
	replays int   // gaps that held a replay of earlier audio
	tail    int   // drain tail frames that arrived intact
	err     error
}

// compare walks the capture: every sent frame before the drain tail must
// appear exactly and in order. Between them the capture may hold inserted
// silence (snd-aloop inserts it on its own when its two ends drift apart, as
// they do when a busy host stalls the VM) or, at an underrun, a replay of
// audio already sent: what is left in the ring buffer when the device runs
// dry (snd-aloop copies by elapsed time, so after a long stall it replays up
// to a buffer before the stop lands). Replays are counted, so the caller can
// require an underrun for each. The last drainTail frames are only counted:
// snd-aloop stops copying when playback drains, so the very end is partly
// zeros, partly stale.
func compare(want, got [][2]int32) match {
	var m match
	first := func(s [][2]int32) int {
		for i, fr := range s {
			if fr != [2]int32{} {
				return i
			}
		}
		return -1
	}
	w0, g0 := first(want), first(got)
	if w0 < 0 || g0 < 0 || g0 < w0 {
		m.err = fmt.Errorf("nothing captured (first sound at %d, sent at %d)", g0, w0)
		return m
	}
	sentAt := make(map[[2]int32]int, len(want))
	for i := len(want) - 1; i >= 0; i-- {
		sentAt[want[i]] = i
	}
	strict := max(0, len(want)-drainTail)
	g := g0 - w0
	i := 0
	for ; i < strict && g < len(got); i, g = i+1, g+1 {
		if got[g] == want[i] {
			continue
		}
		replay := false
		next := resync(want[i:], got, g, func(fr [2]int32) bool {
			if fr == [2]int32{} {
				return true
			}
			j, ok := sentAt[fr]
			replay = replay || ok && j < i
			return ok && j < i
		})
		if next < 0 {
			m.matched = i
			m.err = fmt.Errorf("frame %d: captured %v, sent %v (%s)", i, got[g], want[i], whereSent(want, got[g]))
			return m
		}
		m.gapAt = append(m.gapAt, i)
		if replay {
			m.replays++
		}
		g = next
	}
	m.matched = i
	if i < strict {
		m.err = fmt.Errorf("capture ended after %d of %d frames", i, strict)
		return m
	}
	for ; i < len(want) && g < len(got) && got[g] == want[i]; i, g = i+1, g+1 {
		m.tail++
	}
	return m
}

// resync finds where the capture picks up want again after position g:
// the first place where the next frames match, with only frames filler
// accepts in between. It returns -1 if there is none.
func resync(want, got [][2]int32, g int, filler func([2]int32) bool) int {
	k := min(16, len(want))
	for ; g < len(got); g++ {
		if got[g] == want[0] && g+k <= len(got) && slices.Equal(got[g:g+k], want[:k]) {
			return g
		}
		if !filler(got[g]) {
			return -1
		}
	}
	return -1
}

// whereSent locates a captured frame among the sent ones, to tell a shifted
// stream from corrupted data in a failure message.
func whereSent(want [][2]int32, fr [2]int32) string {
	for i, w := range want {
		if w == fr {
			return fmt.Sprintf("that is sent frame %d", i)
		}
	}
	return "never sent"
}

type recorder struct {
	c       *alsa.Capture
	quit    chan struct{}
	done    chan error
	data    []byte
	arrived []time.Time // when each read returned, one per period
}

func startCapture(cfg alsa.Config) (*recorder, error) { return record(cfg, false) }

// recordFor starts a capture of about d, its buffer allocated up front: a
// buffer grown while the player plays copies megabytes under TCG, and the
// measure case's 40 s capture underran at the same moments (9.6, 15.1 and
// 23.6 s in) with and without measuring.
func recordFor(cfg alsa.Config, d time.Duration) (*recorder, error) {
	return recordInto(cfg, false, d)
}

// record starts a capture. With endOnOverrun an overrun of the capture (the
// host starved the VM's reader) ends the recording with what it holds
// instead of failing it: for the cases that ask whether sound came, not
// whether every frame did.
func record(cfg alsa.Config, endOnOverrun bool) (*recorder, error) {
	return recordInto(cfg, endOnOverrun, 0)
}

func recordInto(cfg alsa.Config, endOnOverrun bool, d time.Duration) (*recorder, error) {
	// 1.4 s of buffer: a VM starved by a busy host must not overrun the
	// capture, or the comparison would blame the sink.
	cfg.MinPeriods, cfg.MaxPeriods = 64, 64
	c, err := alsa.OpenCapture(captureNode, "loopback capture", cfg)
	if err != nil {
		return nil, err
	}
	r := &recorder{c: c, quit: make(chan struct{}), done: make(chan error, 1)}
	if frames := int(d.Seconds() * float64(c.Rate())); frames > 0 {
		r.data = make([]byte, 0, frames*c.FrameBytes())
		r.arrived = make([]time.Time, 0, frames/c.Period()+1)
	}
	go func() {
		fb := c.FrameBytes()
		buf := make([]byte, c.Period()*fb)
		for {
			select {
			case <-r.quit:
				r.done <- nil
				return
			default:
			}
			n, err := c.Read(buf)
			r.data = append(r.data, buf[:n*fb]...)
			if n > 0 {
				r.arrived = append(r.arrived, time.Now())
			}
			if err != nil {
				select {
				case <-r.quit: // stop woke the read up
					r.done <- nil
				default:
					if errors.Is(err, unix.EBADFD) || endOnOverrun && errors.Is(err, unix.EPIPE) {
						// aloop puts capture into DRAINING when the
						// playback side closes: all data is read.
						r.done <- nil
						return
					}
					r.done <- err
				}
				return
			}
		}
	}()
	return r, nil
}

// stop ends the capture and returns the frames, as 32-bit values whatever
// the format.
func (r *recorder) stop() ([][2]int32, error) {
	if r.quit == nil {
		return nil, errors.New("capture already stopped")
	}
	close(r.quit)
	r.quit = nil
	// aloop delivers nothing once playback stopped, so a read can block for
	// good; DROP wakes it. Repeat in case the reader was between reads.
	var err error
	deadline := time.After(5 * time.Second)
wait:
	for {
		r.c.Drop()
		select {
		case err = <-r.done:
			break wait
		case <-deadline:
			err = errors.New("capture stuck")
			break wait
		case <-time.After(100 * time.Millisecond):
		}
	}
	r.c.Close()
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	fb := r.c.FrameBytes()
	frames := make([][2]int32, len(r.data)/fb)
	for i := range frames {
		for c := range 2 {
			b := r.data[i*fb+c*fb/2:]
			switch r.c.Format() {
			case alsa.S32LE, alsa.S24LE:
				frames[i][c] = int32(binary.LittleEndian.Uint32(b))
			case alsa.S24Packed:
				frames[i][c] = int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8
			default:
				frames[i][c] = int32(int16(binary.LittleEndian.Uint16(b)))
			}
		}
	}
	return frames, nil
}
