package output

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/output/alsa"
)

// recorder stands in for a configured device.
type recorder struct {
	format   alsa.Format
	channels int // 0 means 2
	rate     int
	got      []byte
	err      error
	delay    int
	calls    []string
}

func (r *recorder) Format() alsa.Format { return r.format }
func (r *recorder) Channels() int {
	if r.channels == 0 {
		return 2
	}
	return r.channels
}
func (r *recorder) Rate() int { return r.rate }
func (r *recorder) Write(b []byte) error {
	r.got = append(r.got, b...)
	return r.err
}
func (r *recorder) Drop() error         { r.calls = append(r.calls, "drop"); return r.err }
func (r *recorder) Drain() error        { r.calls = append(r.calls, "drain"); return r.err }
func (r *recorder) Delay() (int, error) { return r.delay, nil }
func (r *recorder) Close() error        { return nil }
func (r *recorder) Underruns() int      { return 0 }
func (r *recorder) MaxRewind() int      { return 8 * PeriodFrames }
func (r *recorder) Buffer() int         { return 8 * PeriodFrames }
func (r *recorder) Rewind(n int) (int, error) {
	r.calls = append(r.calls, "rewind")
	return n, r.err
}

func testFrames(n int) [][2]float64 {
	fr := make([][2]float64, n)
	for i := range fr {
		fr[i] = [2]float64{1.2 * math.Sin(float64(i)/7), -0.3 * math.Cos(float64(i)/3)}
	}
	return fr
}

func TestALSAEncodes(t *testing.T) {
	in := testFrames(300) // the left channel clips
	sample := func(f alsa.Format, b []byte) int64 {
		switch f {
		case alsa.S16LE:
			return int64(int16(binary.LittleEndian.Uint16(b)))
		case alsa.S24Packed:
			return int64(int32(uint32(b[0])<<8|uint32(b[1])<<16|uint32(b[2])<<24) >> 8)
		}
		return int64(int32(binary.LittleEndian.Uint32(b)))
	}
	for _, f := range []alsa.Format{alsa.S16LE, alsa.S24LE, alsa.S24Packed, alsa.S32LE} {
		r := &recorder{format: f, rate: DefaultRate}
		s := newALSA(r)
		if err := s.Write(in); err != nil {
			t.Fatal(err)
		}
		if len(r.got) != len(in)*2*f.Bytes() {
			t.Fatalf("%s: %d bytes", f, len(r.got))
		}
		for i, fr := range in {
			for c := range 2 {
				got := sample(f, r.got[(2*i+c)*f.Bytes():])
				var want int64
				switch f {
				case alsa.S16LE:
					want = int64(ToS16(fr[c]))
				case alsa.S32LE:
					want = int64(ToS32(fr[c]))
				default:
					want = int64(ToS32(fr[c]) >> 8)
				}
				if got != want {
					t.Fatalf("%s frame %d ch %d: %d, want %d", f, i, c, got, want)
				}
			}
		}
	}
	if ToS32(1) != math.MaxInt32 || ToS32(-2) != math.MinInt32 || ToS32(0.5) != 1<<30 {
		t.Errorf("ToS32 bounds: %d %d %d", ToS32(1), ToS32(-2), ToS32(0.5))
	}
}

func TestALSAChannelLayouts(t *testing.T) {
	in := [][2]float64{{0.5, 0.25}, {-1, 1}}
	for _, tc := range []struct {
		channels int
		want     []int16
	}{
		{1, []int16{ToS16(0.375), 0}},
		{2, []int16{ToS16(0.5), ToS16(0.25), -32768, 32767}},
		{4, []int16{ToS16(0.5), ToS16(0.25), 0, 0, -32768, 32767, 0, 0}},
	} {
		r := &recorder{format: alsa.S16LE, channels: tc.channels, rate: DefaultRate}
		if err := newALSA(r).Write(in); err != nil {
			t.Fatal(err)
		}
		var got []int16
		for i := 0; i+1 < len(r.got); i += 2 {
			got = append(got, int16(binary.LittleEndian.Uint16(r.got[i:])))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%d channels: %v, want %v", tc.channels, got, tc.want)
		}
	}
}

func TestALSADeviceLost(t *testing.T) {
	r := &recorder{format: alsa.S16LE, rate: DefaultRate, err: fmt.Errorf("alsa hw:1,0 (Device): write: %w", alsa.ErrGone)}
	s := newALSA(r)
	for name, err := range map[string]error{"write": s.Write(testFrames(4)), "drop": s.Drop(), "drain": s.Drain()} {
		if !errors.Is(err, ErrDeviceLost) || !strings.Contains(err.Error(), "hw:1,0 (Device)") {
			t.Errorf("%s: %v, want ErrDeviceLost naming the device", name, err)
		}
	}
	r.err = errors.New("alsa hw:1,0 (Device): write: bad address")
	if err := s.Write(testFrames(4)); err == nil || errors.Is(err, ErrDeviceLost) {
		t.Errorf("other errors are not a lost device: %v", err)
	}
}

func TestOpenFirstUsable(t *testing.T) {
	devs := []alsa.Device{{Card: 0, CardID: "vc4hdmi0"}, {Card: 1, CardID: "Headphones"}, {Card: 2, CardID: "Device"}}
	unsupported := func(d alsa.Device) error {
		return fmt.Errorf("alsa %s: %w: no acceptable sample format", d, alsa.ErrUnsupported)
	}
	var tried []int
	open := func(errs map[int]error) func(alsa.Device) (pcm, error) {
		tried = nil
		return func(d alsa.Device) (pcm, error) {
			tried = append(tried, d.Card)
			if err := errs[d.Card]; err != nil {
				return nil, err
			}
			return &recorder{format: alsa.S16LE, rate: DefaultRate}, nil
		}
	}
	if _, err := openFirst(devs, open(map[int]error{0: unsupported(devs[0])})); err != nil || fmt.Sprint(tried) != "[0 1]" {
		t.Errorf("unusable first card: %v, tried %v", err, tried)
	}
	busy := errors.New("alsa hw:0,0 (vc4hdmi0): device is busy")
	if _, err := openFirst(devs, open(map[int]error{0: busy})); err != busy || fmt.Sprint(tried) != "[0]" {
		t.Errorf("busy first card: %v, tried %v; want its error, no other card", err, tried)
	}
	all := map[int]error{0: unsupported(devs[0]), 1: unsupported(devs[1]), 2: unsupported(devs[2])}
	_, err := openFirst(devs, open(all))
	if err == nil || !strings.Contains(err.Error(), "hw:2,0 (Device)") || errors.Is(err, alsa.ErrGone) {
		t.Errorf("nothing usable: %v", err)
	}
	if _, err := openFirst(nil, open(nil)); !errors.Is(err, alsa.ErrGone) {
		t.Errorf("no devices: %v", err)
	}
}

func TestParseALSA(t *testing.T) {
	for _, spec := range []string{"alsa", "alsa:Headphones", "alsa:1,0", "alsa:hw:0,0", "alsa:USB Audio"} {
		if _, err := Parse(spec); err != nil {
			t.Errorf("Parse(%q): %v", spec, err)
		}
	}
	for _, spec := range []string{"alsa:1,x", "alsa:,1"} {
		if _, err := Parse(spec); err == nil {
			t.Errorf("Parse(%q) accepted", spec)
		}
	}
	if _, err := OpenALSA(t.TempDir(), "", alsa.Config{}); !errors.Is(err, ErrDeviceLost) {
		t.Errorf("no sound card: %v", err)
	}
}

// The sink takes frames at the device's rate, whatever it is, so Rewind
// always reaches the device.
func TestALSARewind(t *testing.T) {
	for _, rate := range []int{48000, 44100} {
		r := &recorder{format: alsa.S16LE, rate: rate}
		s := newALSA(r)
		if s.Rate() != rate {
			t.Errorf("Rate = %d on a device at %d", s.Rate(), rate)
		}
		if n, err := s.Rewind(3000); n != 3000 || err != nil || !slices.Equal(r.calls, []string{"rewind"}) {
			t.Errorf("%d Hz: Rewind = %d, %v, calls %q", rate, n, err, r.calls)
		}
		if m := s.MaxRewind(); m != 8*PeriodFrames {
			t.Errorf("%d Hz: MaxRewind = %d, want the device's %d", rate, m, 8*PeriodFrames)
		}
	}
	r := &recorder{format: alsa.S16LE, rate: DefaultRate, err: fmt.Errorf("alsa hw:1,0 (Device): rewind: %w", alsa.ErrGone)}
	if _, err := newALSA(r).Rewind(10); !errors.Is(err, ErrDeviceLost) {
		t.Errorf("Rewind on a lost device: %v", err)
	}
}

// The null sink takes back only what its modelled device has not played.
func TestNullRewind(t *testing.T) {
	now := time.Unix(0, 0)
	n := NewNull(44100)
	n.p.now, n.p.sleep = func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) }
	for range 8 {
		if err := n.Write(make([][2]float64, PeriodFrames)); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(n.p.framesDuration(PeriodFrames)) // one period heard
	d := n.Delay()
	if d < 7*PeriodFrames-1 || d > 7*PeriodFrames { // nanosecond rounding
		t.Fatalf("Delay = %d, want 7 periods", d)
	}
	if m := n.MaxRewind(); m != leadPeriods*PeriodFrames {
		t.Errorf("MaxRewind = %d, want the modelled %d periods", m, leadPeriods)
	}
	if got, _ := n.Rewind(10 * PeriodFrames); got != d {
		t.Errorf("Rewind took %d, want the %d unheard frames", got, d)
	}
	if d := n.Delay(); d != 0 {
		t.Errorf("Delay after rewinding everything = %d", d)
	}
}
