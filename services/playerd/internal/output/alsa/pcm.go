package alsa

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"syscall"
	"time"
	"unsafe"
)

// ErrGone reports that the device disappeared (a USB DAC was unplugged).
// Only closing the PCM and opening the device again can help.
var ErrGone = errors.New("device gone")

// ErrUnsupported reports a device that cannot play what the player renders
// in any configuration it offers (format, channels, rate, buffer).
var ErrUnsupported = errors.New("unsupported device")

// Conn is the kernel side of an open PCM: the ioctls the writer needs. The
// real one talks to /dev/snd; tests replay device behaviour through a fake.
type Conn interface {
	HWRefine(p *hwParams) error
	HWParams(p *hwParams) error
	SWParams(p *swParams) error
	Prepare() error
	Drop() error
	Drain() error
	Resume() error
	WriteI(x *xferi) error
	Delay(frames *int) error
	// Rewind moves the application pointer back by *frames; the kernel
	// writes back how many it moved.
	Rewind(frames *uint) error
	Close() error
}

// Config says what the writer asks the device for. Zero fields take the
// defaults in brackets.
type Config struct {
	Formats      []Format // in order of preference [S32LE, S24LE, S24Packed, S16LE]
	Rate         int      // the rate wanted; the nearest offered is taken [48000]
	PeriodFrames int      // the period wanted; the nearest offered is taken [1024]
	MinPeriods   int      // fewest periods in the buffer [8]
	MaxPeriods   int      // most periods in the buffer; the most the device allows up to this is taken [16]
	StartPeriods int      // periods written before the device starts, at most the buffer [8]
}

func (c Config) withDefaults() Config {
	if len(c.Formats) == 0 {
		// The more bits, the less software volume costs in resolution.
		c.Formats = []Format{S32LE, S24LE, S24Packed, S16LE}
	}
	if c.Rate == 0 {
		c.Rate = 48000
	}
	if c.PeriodFrames == 0 {
		c.PeriodFrames = 1024
	}
	if c.MinPeriods == 0 {
		c.MinPeriods = 8
	}
	if c.MaxPeriods < c.MinPeriods {
		c.MaxPeriods = max(16, c.MinPeriods)
	}
	if c.StartPeriods <= 0 {
		c.StartPeriods = 8
	}
	return c
}

// PCM is an open, configured playback stream. It is not safe for concurrent
// use; the player goroutine owns it.
type PCM struct {
	c    Conn
	name string

	format   Format
	channels int
	rate     int
	period   int // frames
	buffer   int // frames
	frame    int // bytes per frame

	underruns int
	noRewind  bool // the driver cannot take audio back, or refused to once
	sleep     func(time.Duration)
}

// NewPCM negotiates the parameters over an already open connection and
// prepares the stream. name labels errors. On failure c is closed.
func NewPCM(c Conn, name string, cfg Config) (*PCM, error) {
	p := &PCM{c: c, name: name, sleep: time.Sleep}
	if err := p.setup(cfg.withDefaults()); err != nil {
		c.Close()
		return nil, err
	}
	return p, nil
}

// maxChannels bounds the channel count the writer accepts (surround cards).
const maxChannels = 32

func (p *PCM) Format() Format { return p.format }
func (p *PCM) Channels() int  { return p.channels }
func (p *PCM) Rate() int      { return p.rate }
func (p *PCM) Period() int    { return p.period }
func (p *PCM) Buffer() int    { return p.buffer }
func (p *PCM) FrameBytes() int {
	return p.frame
}

// Underruns counts the underruns recovered from since the stream was opened.
func (p *PCM) Underruns() int { return p.underruns }

func (p *PCM) errorf(format string, args ...any) error {
	return fmt.Errorf("alsa %s: "+format, append([]any{p.name}, args...)...)
}

func refine(c Conn, hp *hwParams) error {
	hp.rmask = ^uint32(0)
	return c.HWRefine(hp)
}

func (p *PCM) setup(cfg Config) error {
	var hp hwParams
	hp.any()
	if err := refine(p.c, &hp); err != nil {
		return p.errorf("query parameters: %w", err)
	}
	if !hp.hasMask(paramAccess, accessRWInterleaved) {
		return p.errorf("%w: no interleaved read/write access", ErrUnsupported)
	}
	hp.setMask(paramAccess, accessRWInterleaved)

	p.format = -1
	for _, f := range cfg.Formats {
		if hp.hasMask(paramFormat, uint(f)) {
			p.format = f
			break
		}
	}
	if p.format < 0 {
		var want []string
		for _, f := range cfg.Formats {
			want = append(want, f.String())
		}
		return p.errorf("%w: no acceptable sample format (device offers none of %s)", ErrUnsupported, strings.Join(want, ", "))
	}
	hp.setMask(paramFormat, uint(p.format))
	hp.setMask(paramSubformat, 0)
	// Stereo where offered; else mono (a single speaker: the sink mixes
	// down); else the fewest channels above two (the sink fills the rest
	// with silence).
	lo, hi := hp.bounds(paramChannels)
	switch {
	case lo <= 2 && hi >= 2:
		p.channels = 2
	case lo == 1:
		p.channels = 1
	case lo > 2 && lo <= maxChannels:
		p.channels = int(lo)
	default:
		return p.errorf("%w: no usable channel count (device takes %d to %d)", ErrUnsupported, lo, hi)
	}
	hp.setRange(paramChannels, uint32(p.channels), uint32(p.channels))
	if err := refine(p.c, &hp); err != nil {
		return p.errorf("%w: refuses %s, %d channels, interleaved: %w", ErrUnsupported, p.format, p.channels, err)
	}

	rate, err := near(p.c, &hp, paramRate, uint32(cfg.Rate))
	if err != nil {
		return p.errorf("%w: no usable sample rate: %w", ErrUnsupported, err)
	}
	period, err := near(p.c, &hp, paramPeriodSize, uint32(cfg.PeriodFrames))
	if err != nil {
		return p.errorf("%w: no usable period size: %w", ErrUnsupported, err)
	}
	// The most periods in range: the player fills the buffer in batches and
	// keeps a few periods queued when it wakes, so the deeper the buffer, the
	// fewer its wakeups; a retake makes a command heard within a period
	// whatever the depth.
	periods := uint32(cfg.MinPeriods)
	try := hp
	try.setRange(paramPeriods, periods, uint32(cfg.MaxPeriods))
	if refine(p.c, &try) == nil {
		_, periods = try.bounds(paramPeriods)
	}
	if _, err := near(p.c, &hp, paramPeriods, periods); err != nil {
		return p.errorf("%w: no usable period count: %w", ErrUnsupported, err)
	}
	if err := refine(p.c, &hp); err != nil {
		return p.errorf("%w: refuses %d Hz, %d-frame periods: %w", ErrUnsupported, rate, period, err)
	}
	if err := p.c.HWParams(&hp); err != nil {
		if errors.Is(err, syscall.EBUSY) {
			return p.errorf("device is busy: %w", err)
		}
		return p.errorf("set hardware parameters: %w", err)
	}
	for _, v := range []struct {
		param int
		dst   *int
	}{{paramRate, &p.rate}, {paramPeriodSize, &p.period}, {paramBufferSize, &p.buffer}} {
		n, ok := hp.value(v.param)
		if !ok || n == 0 {
			return p.errorf("device left the rate, period or buffer size open (parameter %d)", v.param)
		}
		*v.dst = int(n)
	}
	p.frame = p.channels * p.format.Bytes()
	p.noRewind = hp.info&infoNoRewinds != 0

	sp := swParams{
		availMin: uint(p.period),
		// Start once StartPeriods are written: cushion enough against
		// scheduling hiccups while the player writes the rest of the buffer,
		// and the first sound does not wait for a deep buffer's worth of
		// decoding; Drain starts a stream that never got that far.
		startThreshold: uint(min(p.buffer, cfg.StartPeriods*p.period)),
		stopThreshold:  uint(p.buffer),
		// A silence size of at least the boundary makes the kernel zero
		// whatever has been played. Without it, an underrun replays stale
		// audio from the ring buffer until the stream stops: a stutter
		// instead of a short gap.
		silenceSize: math.MaxInt64,
		proto:       pcmProtocol,
	}
	if err := p.c.SWParams(&sp); err != nil {
		return p.errorf("set software parameters: %w", err)
	}
	if err := p.c.Prepare(); err != nil {
		return p.errorf("prepare: %w", err)
	}
	return nil
}

// pcmProtocol is SNDRV_PCM_VERSION 2.0.15 (Linux 5.x and 6.x); the fields we
// set exist since 2.0.0, so the exact value only gates tstamp_type.
const pcmProtocol = 2<<16 | 0<<8 | 15

// near fixes param at want or, if the device refuses that, at the nearest
// value it offers (upwards wins a tie), like snd_pcm_hw_params_set_*_near.
func near(c Conn, hp *hwParams, param int, want uint32) (uint32, error) {
	fix := func(v uint32) bool {
		t := *hp
		t.setRange(param, v, v)
		if refine(c, &t) != nil {
			return false
		}
		*hp = t
		return true
	}
	if fix(want) {
		return want, nil
	}
	var cands []uint32
	up := *hp
	up.setRange(param, want, ^uint32(0))
	if refine(c, &up) == nil {
		lo, _ := up.bounds(param)
		cands = append(cands, lo)
	}
	down := *hp
	down.setRange(param, 0, want)
	if refine(c, &down) == nil {
		_, hi := down.bounds(param)
		if len(cands) == 0 || want-hi < cands[0]-want {
			cands = append([]uint32{hi}, cands...)
		} else {
			cands = append(cands, hi)
		}
	}
	for _, v := range cands {
		if fix(v) {
			return v, nil
		}
	}
	lo, hi := hp.bounds(param)
	return 0, fmt.Errorf("want %d, device offers %d..%d", want, lo, hi)
}

// maxStalls bounds how often in a row the device may accept nothing (or
// say EAGAIN) before Write gives up instead of spinning.
const maxStalls = 100

// Write plays buf, whole interleaved frames in the negotiated format. It
// blocks while the device buffer is full, continues after partial writes and
// recovers from underruns and suspends. Only a lost device or an unexpected
// error ends it early.
func (p *PCM) Write(buf []byte) error {
	n := len(buf) / p.frame
	stalls := 0
	for off := 0; off < n; {
		x := xferi{buf: unsafe.Pointer(&buf[off*p.frame]), frames: uint(n - off)}
		err := p.c.WriteI(&x)
		if err != nil && !errors.Is(err, syscall.EAGAIN) {
			if err := p.recover(err); err != nil {
				return err
			}
			continue
		}
		if err != nil || x.result <= 0 {
			if stalls++; stalls > maxStalls {
				return p.errorf("write: device accepts no frames")
			}
			p.sleep(time.Millisecond)
			continue
		}
		stalls = 0
		off += min(x.result, n-off)
	}
	return nil
}

// recover handles an error from a transfer or drain and returns nil when the
// stream can go on.
func (p *PCM) recover(err error) error {
	switch {
	case errors.Is(err, syscall.EINTR):
		return nil
	case errors.Is(err, syscall.EPIPE): // underrun: everything written was played
		p.underruns++
		return p.prepare("after underrun")
	case errors.Is(err, syscall.ESTRPIPE): // the system suspended
		return p.resume()
	case errors.Is(err, syscall.EBADFD):
		// Either the stream is in a state that needs PREPARE or the device
		// went away; PREPARE tells which.
		return p.prepare("after " + err.Error())
	}
	return p.fail("write", err)
}

// resumeTries bounds the wait for a suspended device to come back.
const resumeTries = 200

func (p *PCM) resume() error {
	for range resumeTries {
		err := p.c.Resume()
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EAGAIN) {
			break // cannot resume (ENOSYS and friends): start again
		}
		p.sleep(10 * time.Millisecond)
	}
	return p.prepare("after suspend")
}

func (p *PCM) prepare(why string) error {
	if err := p.c.Prepare(); err != nil {
		return p.fail("prepare "+why, err)
	}
	return nil
}

// gone reports errors that mean the device itself is no longer there.
func gone(err error) bool {
	return errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EBADFD) ||
		errors.Is(err, syscall.ENXIO) || errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENOENT)
}

func (p *PCM) fail(op string, err error) error {
	if gone(err) {
		return p.errorf("%s: %w (%w)", op, ErrGone, err)
	}
	return p.errorf("%s: %w", op, err)
}

// Drop discards everything buffered at once and readies the stream for the
// next Write.
func (p *PCM) Drop() error {
	if err := p.c.Drop(); err != nil && !errors.Is(err, syscall.EBADFD) {
		return p.fail("drop", err)
	}
	return p.prepare("after drop")
}

// Drain blocks until everything written has been played, then readies the
// stream for the next Write.
func (p *PCM) Drain() error {
	for {
		err := p.c.Drain()
		if err == nil || errors.Is(err, syscall.EPIPE) {
			break // an underrun at the end means it all played
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if errors.Is(err, syscall.ESTRPIPE) {
			if err := p.resume(); err != nil {
				return err
			}
			continue
		}
		return p.fail("drain", err)
	}
	return p.prepare("after drain")
}

// Delay reports how many written frames have not been heard yet.
func (p *PCM) Delay() (int, error) {
	var d int
	err := p.c.Delay(&d)
	switch {
	case err == nil:
		return max(d, 0), nil
	case errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ESTRPIPE):
		return 0, nil // stopped: nothing is waiting to be heard
	}
	return 0, p.fail("delay", err)
}

// Rewind takes back up to frames of the newest written audio that the device
// has not played yet, so the next Write replaces it, and reports how many it
// took. The stream keeps running: nothing already playing is interrupted. A
// driver that cannot rewind gives back nothing, then and from then on.
func (p *PCM) Rewind(frames int) (int, error) {
	if frames <= 0 || p.noRewind {
		return 0, nil
	}
	n := uint(frames)
	err := p.c.Rewind(&n)
	switch {
	case err == nil:
		return int(min(n, uint(frames))), nil
	case errors.Is(err, syscall.EPIPE), errors.Is(err, syscall.ESTRPIPE):
		return 0, nil // not running: nothing to take back; the next Write recovers
	case errors.Is(err, syscall.ENOSYS), errors.Is(err, syscall.EINVAL), errors.Is(err, syscall.ENOTTY):
		p.noRewind = true
		return 0, nil
	}
	return 0, p.fail("rewind", err)
}

// MaxRewind is the most frames Rewind can ever give back: the whole buffer,
// or nothing from a driver that cannot take audio back.
func (p *PCM) MaxRewind() int {
	if p.noRewind {
		return 0
	}
	return p.buffer
}

// Close releases the device; the kernel stops the stream at once.
func (p *PCM) Close() error {
	if err := p.c.Close(); err != nil {
		return p.errorf("close: %w", err)
	}
	return nil
}
