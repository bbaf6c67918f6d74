package decode

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode/mp3"
)

// Radio stations and podcast episodes arrive over the network as they play:
// not seekable, of unknown length, from servers the box does not control.
// Live decodes such a stream behind the same boundary as files: every
// decoder call contained, every read charged to a budget, the output
// checked.

// Budgets of one Stream call on a live stream. The network's own read
// deadline ends a stalled server long before the time runs out; the bytes
// allow for a new Ogg link's headers within a call.
const (
	liveBytes     = 8 << 20
	liveTime      = time.Minute
	liveMaxPacket = 1 << 20 // an Ogg packet in a stream; cover art in a stream's comments is not worth more
	liveMaxID3    = 1 << 20
	// liveBuffer is small, so that Consumed stays close to what was
	// decoded; it is also how far into a stream without a content type the
	// boundary looks for MPEG frames.
	liveBuffer = 4 << 10
)

// Live is a stream being decoded. Only one goroutine may use it.
type Live struct {
	src    *liveSource
	br     *bufio.Reader
	format beep.Format
	mp3    *mp3Stream
	ogg    *oggLive
	aac    *aacLive
	err    error
	ended  bool
	// clamped is what the guard changed in the decoder's output.
	clamped clamps
}

// liveSource charges every read of the network to the budget of the call in
// progress, like source does for files.
type liveSource struct {
	r        io.Reader
	read     int64
	left     int64
	deadline time.Time
	spent    bool
}

func (s *liveSource) budget(n int64, d time.Duration) {
	s.left, s.deadline, s.spent = n, time.Now().Add(d), false
}

func (s *liveSource) Read(p []byte) (int, error) {
	s.left -= readCost
	if s.left < 0 || time.Now().After(s.deadline) {
		s.spent = true
	}
	if s.spent {
		return 0, ErrBudget
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	s.read += int64(n)
	return n, err
}

// OpenLive starts decoding r. contentType is what the server said it sends
// (may be empty); the content decides, except that a server announcing AAC
// is believed where the content is not plainly something else.
func OpenLive(r io.Reader, contentType string) (*Live, error) {
	src := &liveSource{r: r}
	l := &Live{src: src, br: bufio.NewReaderSize(src, liveBuffer)}
	src.budget(liveBytes, liveTime)
	err := contain("open", func() error { return l.open(contentType) })
	if err == nil && src.spent {
		err = fmt.Errorf("open: %w", ErrBudget)
	}
	if err != nil {
		return nil, fmt.Errorf("stream: %w", err)
	}
	if f := l.format; f.SampleRate < 1000 || f.SampleRate > 768000 || f.NumChannels < 1 {
		return nil, fmt.Errorf("stream: %w: format %+v", ErrCorrupt, f)
	}
	return l, nil
}

func (l *Live) open(contentType string) error {
	mt, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(contentType)), ";")
	aacType := false
	switch strings.TrimSpace(mt) {
	case "audio/aac", "audio/aacp", "audio/x-aac", "audio/mp4", "audio/x-m4a", "audio/m4a", "audio/x-hx-aac-adts":
		aacType = true
	case "audio/mp4a-latm":
		return fault.New(fault.Unsupported, "AAC in LATM cannot be played (the box decodes AAC in ADTS and MP4, MP3, Ogg Vorbis and Ogg Opus)")
	case "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl":
		return fault.New(fault.Unsupported, "a playlist is not audio")
	}
	head, err := l.br.Peek(12)
	if len(head) < 4 {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("%w: the stream ended before any audio", ErrCorrupt)
		}
		return err
	}
	switch kind := sniffLive(head); {
	case kind == "ogg":
		o, err := openOggLive(l.br)
		if err != nil {
			return err
		}
		l.ogg, l.format = o, beep.Format{SampleRate: beep.SampleRate(o.rate), NumChannels: 2, Precision: 2}
		return nil
	case kind == "aac", kind == "mp4", aacType && kind != "mp3" && kind != "ogg":
		return l.openAAC(kind == "mp4")
	case kind == "mp3", mt == "audio/mpeg", mt == "audio/mp3", mt == "audio/mpeg3", l.mpegSync() >= 0:
		return l.openMP3()
	case l.adtsSync():
		return l.openAAC(false) // joined mid-frame, from a server that names no type
	case bytes.HasPrefix(head, []byte("fLaC")):
		return fault.New(fault.Unsupported, "FLAC streams cannot be played (the box decodes MP3, AAC, Ogg Vorbis and Ogg Opus)")
	case bytes.HasPrefix(head, []byte("<")) || strings.HasPrefix(mt, "text/"):
		return fault.New(fault.Unsupported, "the server sent a web page, not audio")
	}
	return fault.New(fault.Unsupported, "not an audio stream the box can play (it decodes MP3, AAC, Ogg Vorbis and Ogg Opus)")
}

// sniffLive names the format of a stream's first bytes: "ogg", "mp3", "aac"
// (ADTS), "mp4" or "".
func sniffLive(h []byte) string {
	switch {
	case bytes.HasPrefix(h, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(h, []byte("ID3")):
		return "mp3"
	case len(h) >= 8 && string(h[4:8]) == "ftyp":
		return "mp4"
	case len(h) >= 2 && h[0] == 0xFF && h[1]&0xF6 == 0xF0:
		return "aac" // ADTS: MPEG sync with layer 0
	case len(h) >= 4 && mpegHeader(h):
		return "mp3"
	}
	return ""
}

// mpegHeader reports whether h starts with a plausible MPEG audio frame
// header: sync, a layer, a bitrate other than free or bad, a sample rate.
func mpegHeader(h []byte) bool {
	return h[0] == 0xFF && h[1]&0xE0 == 0xE0 && h[1]&0x06 != 0 && h[1]&0x18 != 0x08 &&
		h[2]&0xF0 != 0 && h[2]&0xF0 != 0xF0 && h[2]&0x0C != 0x0C
}

// mpegSync finds the first of two MPEG frame headers a frame apart in the
// bytes ahead, or -1: a stream joined mid-frame has junk before its first
// frame.
func (l *Live) mpegSync() int {
	buf, _ := l.br.Peek(l.br.Size())
	for i := 0; i+4 <= len(buf); i++ {
		if !mpegHeader(buf[i:]) {
			continue
		}
		if n := mpegFrameLen(buf[i:]); n > 0 && i+n+4 <= len(buf) && mpegHeader(buf[i+n:]) {
			return i
		}
	}
	return -1
}

// mpegFrameLen is the length of the Layer III frame whose header starts h,
// or 0 for other layers.
func mpegFrameLen(h []byte) int {
	if h[1]&0x06 != 0x02 { // Layer III only
		return 0
	}
	v1 := h[1]&0x18 == 0x18
	rates1 := [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}
	rates2 := [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	freqs := [4]int{44100, 48000, 32000, 0}
	br, fr := rates2[h[2]>>4], freqs[h[2]>>2&3]
	if v1 {
		br = rates1[h[2]>>4]
	}
	switch h[1] & 0x18 {
	case 0x10:
		fr /= 2 // MPEG 2
	case 0x00:
		fr /= 4 // MPEG 2.5
	}
	if br == 0 || fr == 0 {
		return 0
	}
	pad := int(h[2] >> 1 & 1)
	if v1 {
		return 144000*br/fr + pad
	}
	return 72000*br/fr + pad
}

// openMP3 hands the decoder the stream from its first frame: after any
// ID3v2 tag, bounded here, and after the junk of a stream joined
// mid-frame.
func (l *Live) openMP3() error {
	if h, _ := l.br.Peek(10); len(h) == 10 && string(h[:3]) == "ID3" {
		for _, b := range h[6:] {
			if b&0x80 != 0 {
				return fmt.Errorf("%w: ID3v2 size", ErrCorrupt)
			}
		}
		n := int(h[6])<<21 | int(h[7])<<14 | int(h[8])<<7 | int(h[9]) + 10
		if h[5]&0x10 != 0 {
			n += 10
		}
		if n > liveMaxID3 {
			return fmt.Errorf("%w: ID3v2 tag of %d bytes at the start of a stream", ErrCorrupt, n)
		}
		if _, err := l.br.Discard(n); err != nil {
			return err
		}
	}
	if at := l.mpegSync(); at > 0 {
		if _, err := l.br.Discard(at); err != nil {
			return err
		}
	}
	d, err := mp3.NewStream(l.br)
	if err != nil {
		return mp3Error(err)
	}
	l.mp3 = &mp3Stream{d: d}
	l.format = beep.Format{SampleRate: beep.SampleRate(d.SampleRate()), NumChannels: d.Channels(), Precision: 2}
	return nil
}

// Format is the stream's format (the decoders' output is always stereo).
func (l *Live) Format() beep.Format { return l.format }

// Stream decodes the next samples. It blocks on the network (whose reads
// have deadlines) and reports false at the end of the stream or on an error
// (Err).
func (l *Live) Stream(samples [][2]float64) (n int, ok bool) {
	if l.err != nil || l.ended || len(samples) == 0 {
		return 0, l.err == nil && !l.ended
	}
	l.src.budget(liveBytes, liveTime)
	err := contain("stream", func() error {
		if l.ogg != nil {
			n, ok = l.ogg.stream(samples)
			return l.ogg.err
		}
		if l.aac != nil {
			n, ok = l.aac.stream(samples)
			return l.aac.err
		}
		n, ok = l.mp3.Stream(samples)
		return l.mp3.Err()
	})
	switch {
	case l.src.spent:
		l.err = fmt.Errorf("stream: %w", ErrBudget)
	case err != nil:
		l.err = fmt.Errorf("stream: %w", err)
	case n < 0 || n > len(samples):
		l.err = fmt.Errorf("stream: %w: decoder returned %d samples for %d", ErrCorrupt, n, len(samples))
	}
	if l.err != nil {
		return 0, false
	}
	if !ok {
		l.ended = true
	}
	l.clamped.sanitize(samples[:n])
	return n, ok
}

// Err is the error that ended the stream; nil when it ended because the
// server closed it after the last byte.
func (l *Live) Err() error { return l.err }

// Consumed counts the bytes of the stream the decoder has taken so far; the
// caller maps positions in the byte stream (an ICY title) to samples with it.
func (l *Live) Consumed() int64 {
	n := l.src.read - int64(l.br.Buffered())
	if l.mp3 != nil {
		n -= int64(l.mp3.d.Buffered())
	}
	return n
}

// Notice says how the stream plays when that is less than it carries: an
// HE-AAC station plays its AAC-LC core. "" otherwise.
func (l *Live) Notice() string {
	if l.aac == nil {
		return ""
	}
	return l.aac.notice()
}

// Title is the stream title from the current Ogg link's comments ("Artist
// - Title"), or "" when there is none; it changes at each new link.
func (l *Live) Title() string {
	if l.ogg == nil {
		return ""
	}
	return l.ogg.title
}
