package alsa

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

func open(t *testing.T, f *fakeConn, cfg Config) *PCM {
	t.Helper()
	p, err := NewPCM(f, "hw:9,0 (Fake)", cfg)
	if err != nil {
		t.Fatal(err)
	}
	p.sleep = func(time.Duration) {}
	return p
}

func TestNegotiate(t *testing.T) {
	for _, tc := range []struct {
		name    string
		adjust  func(*fakeConn)
		format  Format
		rate    int
		period  int
		periods int
	}{
		{"prefers S32 at 48k", func(*fakeConn) {}, S32LE, 48000, 1024, 16},
		{"S16 only", func(f *fakeConn) { f.formats = []Format{S16LE} }, S16LE, 48000, 1024, 16},
		{"24 bits packed over 16", func(f *fakeConn) { f.formats = []Format{S16LE, S24Packed} }, S24Packed, 48000, 1024, 16},
		{"24 bits padded over packed", func(f *fakeConn) { f.formats = []Format{S24Packed, S24LE, S16LE} }, S24LE, 48000, 1024, 16},
		{"nearest rate below", func(f *fakeConn) { f.rates = []uint32{44100, 96000} }, S32LE, 44100, 1024, 16},
		{"nearest rate above", func(f *fakeConn) { f.rates = []uint32{8000, 32000, 50000} }, S32LE, 50000, 1024, 16},
		{"period floor", func(f *fakeConn) { f.periodMin = 2048 }, S32LE, 48000, 2048, 16},
		{"period ceiling", func(f *fakeConn) { f.periodMx = 512 }, S32LE, 48000, 512, 16},
		{"few periods", func(f *fakeConn) { f.periodsMx = 4 }, S32LE, 48000, 1024, 4},
		{"many periods", func(f *fakeConn) { f.periodsMin = 12 }, S32LE, 48000, 1024, 16},
		{"as many periods as the device takes", func(f *fakeConn) { f.periodsMx = 10 }, S32LE, 48000, 1024, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			tc.adjust(f)
			p := open(t, f, Config{})
			if p.Format() != tc.format || p.Rate() != tc.rate || p.Period() != tc.period || p.Buffer() != tc.period*tc.periods {
				t.Errorf("got %s %d Hz period %d buffer %d; want %s %d Hz period %d buffer %d",
					p.Format(), p.Rate(), p.Period(), p.Buffer(), tc.format, tc.rate, tc.period, tc.period*tc.periods)
			}
			if ch, _ := f.chosen.value(paramChannels); ch != 2 {
				t.Errorf("channels = %d", ch)
			}
			if f.sw.availMin != uint(p.Period()) || f.sw.startThreshold != uint(min(p.Buffer(), 8*p.Period())) || f.sw.stopThreshold != uint(p.Buffer()) {
				t.Errorf("sw params %+v", f.sw)
			}
			if f.sw.silenceSize < 1<<62 || f.sw.silenceThreshold != 0 {
				t.Errorf("underruns would replay stale audio: silence size %d, threshold %d", f.sw.silenceSize, f.sw.silenceThreshold)
			}
			if f.calls[len(f.calls)-1] != "prepare" {
				t.Errorf("not prepared: %v", f.calls)
			}
		})
	}
}

func TestNegotiateChannels(t *testing.T) {
	for _, tc := range []struct{ lo, hi, want uint32 }{{1, 8, 2}, {2, 2, 2}, {1, 1, 1}, {6, 8, 6}, {4, 4, 4}} {
		f := newFake()
		f.chMin, f.chMax = tc.lo, tc.hi
		p := open(t, f, Config{})
		ch, _ := f.chosen.value(paramChannels)
		if p.Channels() != int(tc.want) || ch != tc.want || p.FrameBytes() != int(tc.want)*p.Format().Bytes() {
			t.Errorf("device with %d..%d channels: chose %d (device %d, %d bytes a frame), want %d",
				tc.lo, tc.hi, p.Channels(), ch, p.FrameBytes(), tc.want)
		}
	}
}

func TestNegotiateFailures(t *testing.T) {
	for _, tc := range []struct {
		name   string
		adjust func(*fakeConn)
		cfg    Config
		want   string
		busy   bool
	}{
		{"no format", func(f *fakeConn) { f.formats = []Format{Format(14)} }, Config{}, "no acceptable sample format (device offers none of S32_LE, S24_LE, S24_3LE, S16_LE)", false},
		{"only the format not asked for", func(f *fakeConn) { f.formats = []Format{S32LE} }, Config{Formats: []Format{S16LE}}, "none of S16_LE", false},
		{"too many channels", func(f *fakeConn) { f.chMin, f.chMax = 64, 64 }, Config{}, "no usable channel count (device takes 64 to 64)", false},
		{"busy", func(f *fakeConn) { f.busy = true }, Config{}, "device is busy", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			tc.adjust(f)
			_, err := NewPCM(f, "hw:9,0 (Fake)", tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "hw:9,0 (Fake)") {
				t.Fatalf("err = %v, want it to name the device and say %q", err, tc.want)
			}
			if errors.Is(err, ErrUnsupported) == tc.busy {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v", err, !tc.busy)
			}
			if !f.closed {
				t.Error("connection left open")
			}
		})
	}
}

// frames returns n S16 stereo frames whose bytes count up, so any lost,
// repeated or reordered byte shows.
func frames(n int) []byte {
	b := make([]byte, n*4)
	for i := range b {
		b[i] = byte(i*7 + i/251)
	}
	return b
}

func TestWritePartial(t *testing.T) {
	f := newFake()
	f.formats = []Format{S16LE}
	p := open(t, f, Config{})
	f.writes = []step{{limit: 100}, {limit: 1}, {limit: 0}, {limit: 500}}
	data := frames(1024)
	if err := p.Write(data); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(f.played, data) {
		t.Fatalf("played %d bytes, not what was written", len(f.played))
	}
}

func TestWriteStalledDevice(t *testing.T) {
	f := newFake()
	p := open(t, f, Config{})
	for i := range maxStalls + 1 {
		if i%2 == 0 {
			f.writes = append(f.writes, step{limit: 0})
		} else {
			f.writes = append(f.writes, step{err: syscall.EAGAIN})
		}
	}
	if err := p.Write(frames(10)); err == nil || !strings.Contains(err.Error(), "accepts no frames") {
		t.Fatalf("err = %v", err)
	}
}

func TestRecovery(t *testing.T) {
	for _, tc := range []struct {
		name      string
		writes    []step
		resumes   []error
		prepErr   []error
		calls     []string // after the setup
		underruns int
		gone      bool
	}{
		{
			name:      "underrun",
			writes:    []step{{limit: 300}, {err: syscall.EPIPE}},
			calls:     []string{"write", "write:broken pipe", "prepare", "write"},
			underruns: 1,
		},
		{
			name:    "suspend, resumed",
			writes:  []step{{err: syscall.ESTRPIPE}},
			resumes: []error{syscall.EAGAIN, syscall.EAGAIN, nil},
			calls:   []string{"write:streams pipe error", "resume", "resume", "resume", "write"},
		},
		{
			name:    "suspend, no resume support",
			writes:  []step{{err: syscall.ESTRPIPE}},
			resumes: []error{syscall.ENOSYS},
			calls:   []string{"write:streams pipe error", "resume", "prepare", "write"},
		},
		{
			name:   "interrupted",
			writes: []step{{err: syscall.EINTR}, {err: syscall.EAGAIN}},
			calls:  []string{"write:interrupted system call", "write:resource temporarily unavailable", "write"},
		},
		{
			name:   "bad state, prepare helps",
			writes: []step{{err: syscall.EBADFD}},
			calls:  []string{"write:file descriptor in bad state", "prepare", "write"},
		},
		{
			name:    "unplugged: bad state, then prepare fails",
			writes:  []step{{limit: 10}, {err: syscall.EBADFD}},
			prepErr: []error{syscall.ENODEV},
			calls:   []string{"write", "write:file descriptor in bad state", "prepare"},
			gone:    true,
		},
		{
			name:   "unplugged",
			writes: []step{{err: syscall.ENODEV}},
			calls:  []string{"write:no such device"},
			gone:   true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.formats = []Format{S16LE}
			p := open(t, f, Config{})
			f.calls = nil
			f.writes, f.resumes, f.prepErr = tc.writes, tc.resumes, tc.prepErr
			data := frames(1000)
			err := p.Write(data)
			if !slices.Equal(f.calls, tc.calls) {
				t.Errorf("calls %q, want %q", f.calls, tc.calls)
			}
			if p.Underruns() != tc.underruns {
				t.Errorf("underruns = %d, want %d", p.Underruns(), tc.underruns)
			}
			if tc.gone {
				if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), "hw:9,0 (Fake)") {
					t.Fatalf("err = %v, want ErrGone naming the device", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.played, data) {
				t.Error("recovery lost or repeated frames")
			}
		})
	}
}

func TestUnexpectedWriteError(t *testing.T) {
	f := newFake()
	p := open(t, f, Config{})
	f.writes = []step{{err: syscall.EFAULT}}
	err := p.Write(frames(4))
	if err == nil || errors.Is(err, ErrGone) || !errors.Is(err, syscall.EFAULT) {
		t.Fatalf("err = %v", err)
	}
}

func TestDropDrainDelay(t *testing.T) {
	f := newFake()
	p := open(t, f, Config{})
	f.calls = nil
	if err := p.Drop(); err != nil {
		t.Fatal(err)
	}
	if err := p.Drain(); err != nil {
		t.Fatal(err)
	}
	if want := []string{"drop", "prepare", "drain", "prepare"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q", f.calls, want)
	}
	f.delay = 777
	if d, err := p.Delay(); d != 777 || err != nil {
		t.Errorf("Delay = %d, %v", d, err)
	}
	f.delErr = syscall.EPIPE
	if d, err := p.Delay(); d != 0 || err != nil {
		t.Errorf("Delay after underrun = %d, %v", d, err)
	}
	f.delErr = syscall.ENODEV
	if _, err := p.Delay(); !errors.Is(err, ErrGone) {
		t.Errorf("Delay on a lost device: %v", err)
	}
	f.prepErr = []error{syscall.ENODEV}
	if err := p.Drop(); !errors.Is(err, ErrGone) {
		t.Errorf("Drop on a lost device: %v", err)
	}
}

// Rewind takes back at most what the kernel allows, never interrupts the
// stream, and treats a stopped stream as nothing to take back.
func TestRewind(t *testing.T) {
	f := newFake()
	p := open(t, f, Config{})
	f.calls = nil
	f.rewindable = 3000
	if n, err := p.Rewind(5000); n != 3000 || err != nil {
		t.Errorf("Rewind(5000) with 3000 rewindable = %d, %v", n, err)
	}
	if m := p.MaxRewind(); m != p.Buffer() || m == 0 {
		t.Errorf("MaxRewind = %d, want the buffer, %d", m, p.Buffer())
	}
	f.rewindable = 3000
	if n, err := p.Rewind(1000); n != 1000 || err != nil {
		t.Errorf("Rewind(1000) = %d, %v", n, err)
	}
	if n, _ := p.Rewind(0); n != 0 {
		t.Errorf("Rewind(0) = %d", n)
	}
	if want := []string{"rewind", "rewind"}; !slices.Equal(f.calls, want) {
		t.Errorf("calls %q, want %q (no drop, no prepare)", f.calls, want)
	}
	f.rewindErr = syscall.EPIPE
	if n, err := p.Rewind(100); n != 0 || err != nil {
		t.Errorf("Rewind after an underrun = %d, %v", n, err)
	}
	f.rewindErr = syscall.ENODEV
	if _, err := p.Rewind(100); !errors.Is(err, ErrGone) {
		t.Errorf("Rewind on a lost device: %v", err)
	}
}

// A driver that says it cannot rewind is never asked; one that refuses the
// first time is not asked again.
func TestRewindUnsupported(t *testing.T) {
	f := newFake()
	f.info = infoNoRewinds
	f.rewindable = 3000
	p := open(t, f, Config{})
	f.calls = nil
	if n, err := p.Rewind(1000); n != 0 || err != nil || len(f.calls) != 0 {
		t.Errorf("Rewind on a NO_REWINDS device = %d, %v, calls %q", n, err, f.calls)
	}
	if m := p.MaxRewind(); m != 0 {
		t.Errorf("MaxRewind on a NO_REWINDS device = %d", m)
	}

	f = newFake()
	f.rewindable = 3000
	f.rewindErr = syscall.EINVAL
	p = open(t, f, Config{})
	f.calls = nil
	for range 2 {
		if n, err := p.Rewind(1000); n != 0 || err != nil {
			t.Errorf("Rewind refused by the driver = %d, %v", n, err)
		}
	}
	if len(f.calls) != 1 {
		t.Errorf("calls %q, want one rewind", f.calls)
	}
	if m := p.MaxRewind(); m != 0 {
		t.Errorf("MaxRewind after the driver refused = %d", m)
	}
}
