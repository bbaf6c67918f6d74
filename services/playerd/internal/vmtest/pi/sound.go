package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"

	"github.com/storybox/storybox/services/playerd/internal/output"
)

// The measuring signal: two chirps, one per channel, so that every stretch
// of a few hundred frames occurs once in the whole file and a recording can
// be placed on it to the frame. 48 kHz, the only rate qemu's usb-audio
// takes, so the player plays it without resampling.
const (
	signalRate    = 48000
	signalSeconds = 14
)

// signal is the measuring track's frames.
func signal() [][2]int16 {
	n := signalRate * signalSeconds
	frames := make([][2]int16, n)
	chirp := func(i int, f0, f1, amp float64) int16 {
		t := float64(i) / signalRate
		k := (f1 - f0) / signalSeconds
		return int16(math.Round(amp * 32767 * math.Sin(2*math.Pi*(f0*t+k*t*t/2))))
	}
	for i := range frames {
		frames[i] = [2]int16{chirp(i, 300, 3300, 0.45), chirp(i, 700, 1900, 0.35)}
	}
	return frames
}

// gainFor is the player's volume curve (internal/player): 100 is full
// scale, each step 0.4 dB, 0 silence. The check computes what the device
// must have received from it.
func gainFor(volume int) float64 {
	if volume <= 0 {
		return 0
	}
	return math.Pow(10, float64(volume-100)*40/100/20)
}

// scaled is what the player sends the device for a source frame at gain g:
// the decoder's float (exact: a power of two), times g, back to 16 bits.
func scaled(f [2]int16, g float64) [2]int16 {
	return [2]int16{output.ToS16(float64(f[0]) / (1 << 15) * g), output.ToS16(float64(f[1]) / (1 << 15) * g)}
}

// readRecording reads qemu's WAV recording of the usb-audio device: 16-bit
// stereo, as the device plays it (48 kHz: without qemu's mixing engine the
// header says the backend's default rate, 44.1 kHz, but nothing is
// converted, which a bit-exact match with the 48 kHz file shows). qemu
// writes the header's sizes only when it exits, so the data runs to the
// end of the file; a trailing partial frame is dropped.
func readRecording(path string) ([][2]int16, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if len(b) < 44 || string(b[:4]) != "RIFF" || string(b[8:12]) != "WAVE" {
		return nil, fmt.Errorf("%s: not a WAV file", path)
	}
	if ch, bits := binary.LittleEndian.Uint16(b[22:]), binary.LittleEndian.Uint16(b[34:]); ch != 2 || bits != 16 {
		return nil, fmt.Errorf("%s: %d channels of %d bits; want 2 of 16", path, ch, bits)
	}
	b = b[44:]
	frames := make([][2]int16, len(b)/4)
	for i := range frames {
		frames[i] = [2]int16{int16(binary.LittleEndian.Uint16(b[4*i:])), int16(binary.LittleEndian.Uint16(b[4*i+2:]))}
	}
	return frames, nil
}

// alignWindow frames from keyAt, well after the start's fade-in and ramp,
// place a recording on the source.
const (
	keyAt       = signalRate
	alignWindow = 1024
)

// rampLimit bounds how long the player may take to move from one gain to
// another (it ramps over one render batch, a few periods).
const rampLimit = 16384

// settle frames in a row at the new gain end a ramp: a frame or two near
// zero may match any gain.
const settle = 64

// errUnfinished: the recording so far ends inside the play (qemu writes it
// through a small buffer, so the last milliseconds arrive later).
var errUnfinished = errors.New("the recording ends before the pause's fade-out")

// heard is what one play of the measuring track sounded like on the device.
type heard struct {
	full, ramp, quieter int // frames at full scale, ramping, at the lower volume
	faded               bool
	gaps                []int // frames missing from the recording, per gap
}

// maxGap is the most frames one gap may miss: two USB packets (1 ms, 48
// frames at 48 kHz). Between the guest and qemu's recording, qemu's
// emulated USB controller and audio device lose a packet or part of one
// now and then (gaps of 16, 32 and 48 frames seen, also on an idle
// machine); the player never loses so little (its writes are periods of
// 1024 frames), nor anything without an error.
const maxGap = 100

// follow walks the recording from frame i (source frame i-off) while its
// frames match the source's, past gaps (noted in h.gaps); it returns the
// first frame that does not match and the offset there.
func (h *heard) follow(rec, src [][2]int16, i, off int, match func(r, s [2]int16) bool) (int, int) {
	for i < len(rec) && i-off < len(src) {
		if match(rec[i], src[i-off]) {
			i++
			continue
		}
		d := resync(rec, src, i, i-off, match)
		if d == 0 {
			break
		}
		h.gaps = append(h.gaps, d)
		off -= d
	}
	return i, off
}

// resync looks for the stream again after a gap: the smallest d in
// 1..maxGap for which the next settle frames from recording frame i are
// source frames from k+d on, as match says; 0 if there is none.
func resync(rec, src [][2]int16, i, k int, match func(r, s [2]int16) bool) int {
	for d := 1; d <= maxGap; d++ {
		n := min(settle, len(rec)-i, len(src)-k-d)
		if n < settle {
			return 0
		}
		ok := true
		for j := range n {
			if !match(rec[i+j], src[k+d+j]) {
				ok = false
				break
			}
		}
		if ok {
			return d
		}
	}
	return 0
}

// judgeSegment checks the last play of src in rec: played from the start
// at volume 100 (gain 1: the device got the file's own samples, bit for
// bit), in order, no frame repeated; then the volume lowered to quieter
// (every frame the source at that gain, give or take one step of rounding,
// after a ramp); then a fade-out to silence at the pause. Frames may be
// missing only in gaps of at most maxGap (see there), which it lists. It
// returns how long each part was.
func judgeSegment(rec, src [][2]int16, quieter int) (heard, error) {
	var h heard
	// The last time the recording reached the source's second second at
	// full scale: the play being judged (an earlier try may precede it).
	key := src[keyAt : keyAt+alignWindow]
	at := -1
	for i := len(rec) - alignWindow; i >= 0; i-- {
		if rec[i] == key[0] && equal(rec[i:i+alignWindow], key) {
			at = i
			break
		}
	}
	if at < 0 {
		return h, errors.New("the measuring track was not heard at full scale (no stretch of it matches the recording bit for bit)")
	}
	off := at - keyAt // recording index of source frame 0 (gaps aside)
	// Before: the start, which fades in and ramps from the volume the
	// player had before to 100, never louder than the file.
	exact := func(r, s [2]int16) bool { return r == s }
	first, back := at, off // back: the offset before the gaps behind the key
	for first > max(back, 0) {
		if rec[first-1] == src[first-1-back] {
			first--
			continue
		}
		// A gap before: the frames before it are further back in the
		// source. Looked for backwards, as resync does forwards.
		d := 0
		for c := 1; c <= maxGap && d == 0 && first-settle >= 0 && first-settle-back-c >= 0; c++ {
			if equal(rec[first-settle:first], src[first-settle-back-c:first-back-c]) {
				d = c
			}
		}
		if d == 0 {
			break
		}
		h.gaps = append(h.gaps, d)
		back += d
	}
	// qemu may miss the first packets of a stream (it records once the
	// guest has switched the device on): at most the fade-in, which is
	// near silence and not judged to the sample.
	if back < -output.FadeFrames {
		return h, fmt.Errorf("the recording starts %d frames into the track, past its fade-in", -back)
	}
	if first-back > rampLimit {
		return h, fmt.Errorf("the start took %d frames to reach full scale (a frame lost or repeated, or a ramp longer than %d)", first-back, rampLimit)
	}
	for j := max(back, 0); j < first; j++ {
		if louder(rec[j], src[j-back]) {
			return h, fmt.Errorf("recording frame %d (%v) louder than the file's (%v) at the start", j, rec[j], src[j-back])
		}
	}
	i := at
	i, off = h.follow(rec, src, i, off, exact)
	h.full = i - first
	if i-off >= len(src) {
		return h, errors.New("the whole track played at full scale: the volume command did not act")
	}
	// Then down to the lower gain: monotone, never above full scale.
	g := gainFor(quieter)
	rampStart := i
	settled := func(i int) bool { // the lower gain holds from frame i on
		for j := i; j < min(i+settle, len(rec), off+len(src)); j++ {
			if !near(rec[j], scaled(src[j-off], g)) {
				return false
			}
		}
		return true
	}
	for ; i < len(rec) && i-off < len(src) && !settled(i); i++ {
		if i-rampStart > rampLimit {
			return h, fmt.Errorf("the volume did not reach %d (gain %.4f) within %d frames of the first change", quieter, g, rampLimit)
		}
		if louder(rec[i], src[i-off]) {
			return h, fmt.Errorf("recording frame %d (%v) louder than the file's (%v) while turning down: a frame lost, repeated or from elsewhere", i, rec[i], src[i-off])
		}
	}
	h.ramp = i - rampStart
	quietStart := i
	i, off = h.follow(rec, src, i, off, func(r, s [2]int16) bool { return near(r, scaled(s, g)) })
	h.quieter = i - quietStart
	if i >= len(rec) {
		return h, errUnfinished
	}
	if h.quieter < signalRate/2 {
		return h, fmt.Errorf("only %d frames at volume %d before source frame %d differs (recorded %v, want %v)",
			h.quieter, quieter, i-off, frameAt(rec, i), scaled(src[min(i-off, len(src)-1)], g))
	}
	if i-off >= len(src) {
		return h, errors.New("the track played to its end: the pause did not act")
	}
	// The pause fades out what would have followed, over FadeFrames, then
	// the device stops; what comes after (a later play) is not this one's.
	// A packet may be missing just before the fade, too.
	fade := output.FadeFrames
	end := min(i+2*fade, len(rec))
	fadesAt := func(off int) (bool, int) { // faded to silence, or the frame where not
		for j := i; j < end; j++ {
			if j-off >= len(src) || louder(rec[j], scaled(src[j-off], g)) {
				return false, j
			}
			if rec[j] == ([2]int16{}) {
				return true, j
			}
		}
		return false, end
	}
	faded, broke := fadesAt(off)
	for d := 1; d <= maxGap && !faded && broke < end; d++ {
		if ok, _ := fadesAt(off - d); ok {
			h.gaps = append(h.gaps, d)
			faded = true
		}
	}
	switch {
	case faded:
		h.faded = true
		return h, nil
	case broke < end:
		return h, fmt.Errorf("the sound at volume %d broke off at source frame %d without fading out (recorded %v, the track there %v): a frame lost or repeated, another gain, or a cut",
			quieter, broke-off, rec[broke], scaled(src[min(broke-off, len(src)-1)], g))
	case end == len(rec):
		return h, errUnfinished
	}
	return h, fmt.Errorf("the sound did not fade to silence within %d frames of the pause", 2*fade)
}

func equal(a, b [][2]int16) bool {
	for i := range b {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// near allows one step of rounding per sample: the guest (arm64) may fuse a
// multiply and add where the host does not.
func near(a, b [2]int16) bool {
	d := func(x, y int16) int { return max(int(x)-int(y), int(y)-int(x)) }
	return d(a[0], b[0]) <= 1 && d(a[1], b[1]) <= 1
}

// louder reports a frame whose samples are larger in size than the
// reference's (by more than rounding), or of the other sign.
func louder(got, ref [2]int16) bool {
	for c := range 2 {
		g, r := int(got[c]), int(ref[c])
		if g*r < 0 && max(g, -g) > 1 {
			return true
		}
		if max(g, -g) > max(r, -r)+1 {
			return true
		}
	}
	return false
}

func frameAt(rec [][2]int16, i int) any {
	if i < len(rec) {
		return rec[i]
	}
	return "end of recording"
}
