package decode

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/jfreymuth/vorbis"
	"github.com/pion/opus"
)

// An Ogg radio stream is a chain: each song is a new logical stream (a new
// link) that begins with its own header packets, whose comments carry the
// song's title. oggLive follows the chain, decoding Vorbis and Opus packets
// itself, so a new link means new headers, checked as a file's are, and a
// new title.

// liveMaxForeignPages bounds the pages of other logical streams (a Skeleton
// track, video) skipped in a row.
const liveMaxForeignPages = 4096

type oggLive struct {
	r        io.Reader
	pk       packets
	serial   uint32
	rate     int
	channels int
	vorbis   *vorbis.Decoder
	opus     opus.Decoder
	isOpus   bool
	gain     float64 // Opus output gain (RFC 7845 §5.1), linear; 1 for Vorbis
	discard  int     // Opus pre-skip still to drop
	packets  [][]byte
	pcm      []float32 // interleaved, channels wide
	pcmOff   int
	title    string
	err      error
	eof      bool
}

func openOggLive(r io.Reader) (*oggLive, error) {
	o := &oggLive{r: r}
	h, body, err := o.nextPage(true)
	if err != nil {
		return nil, err
	}
	if err := o.startLink(h, body); err != nil {
		return nil, err
	}
	return o, nil
}

// nextPage reads the next page of the current logical stream, or the first
// page of a new one; pages of streams interleaved with it are skipped.
func (o *oggLive) nextPage(first bool) (pageHeader, []byte, error) {
	for range liveMaxForeignPages {
		h, body, _, err := readPage(o.r)
		if err != nil {
			return h, nil, err
		}
		if h.bos || (!first && h.serial == o.serial) {
			return h, body, nil
		}
	}
	return pageHeader{}, nil, fmt.Errorf("%w: no page of the audio stream in %d pages", errOgg, liveMaxForeignPages)
}

// startLink reads the header packets of the link whose first page is h and
// prepares its decoder. A later link must keep the sample rate: the
// resampler after the decoder is built for one.
func (o *oggLive) startLink(h pageHeader, body []byte) error {
	o.serial = h.serial
	o.pk = packets{serial: h.serial, limit: liveMaxPacket}
	var hs [][]byte
	need := 0
	for page := 0; ; page++ {
		ps, err := o.pk.add(h, body)
		if err != nil {
			return err
		}
		hs = append(hs, ps...)
		if need == 0 && len(hs) > 0 {
			switch {
			case bytes.HasPrefix(hs[0], []byte("\x01vorbis")):
				need = 3
			case bytes.HasPrefix(hs[0], []byte("OpusHead")):
				need = 2
			default:
				return fmt.Errorf("%w: an Ogg stream of neither Vorbis nor Opus", ErrUnsupported)
			}
		}
		if need > 0 && len(hs) >= need {
			break
		}
		if page >= oggMaxHeaderPages {
			return fmt.Errorf("%w: headers span more than %d pages", errOgg, oggMaxHeaderPages)
		}
		if h, body, err = o.nextPage(false); err != nil {
			if errors.Is(err, io.EOF) {
				err = fmt.Errorf("%w: missing headers", errOgg)
			}
			return err
		}
		if h.bos {
			return fmt.Errorf("%w: a link ended inside its headers", errOgg)
		}
	}
	rate, channels, comment := 0, 0, []byte(nil)
	if need == 3 {
		if err := checkVorbisHeaders(hs[:3]); err != nil {
			return fmt.Errorf("vorbis: %w", err)
		}
		v := new(vorbis.Decoder)
		for _, p := range hs[:3] {
			if err := v.ReadHeader(p); err != nil {
				return fmt.Errorf("vorbis: %w: %v", ErrCorrupt, err)
			}
		}
		o.vorbis, o.isOpus, o.gain = v, false, 1
		rate, channels, comment = v.SampleRate(), v.Channels(), hs[1][7:]
	} else {
		id := hs[0]
		if len(id) < 19 {
			return fmt.Errorf("opus: %w: short OpusHead", errOgg)
		}
		channels = int(id[9])
		if channels < 1 || channels > 2 || id[18] > 1 {
			return fmt.Errorf("opus: %d channels with mapping family %d: only mono and stereo are supported", channels, id[18])
		}
		if !bytes.HasPrefix(hs[1], []byte("OpusTags")) {
			return fmt.Errorf("opus: %w: no OpusTags", errOgg)
		}
		if err := checkVorbisComment(hs[1][8:]); err != nil {
			return fmt.Errorf("opus: %w", err)
		}
		dec, err := opus.NewDecoderWithOutput(opusRate, channels)
		if err != nil {
			return fmt.Errorf("opus: %w", err)
		}
		o.opus, o.isOpus, o.vorbis = dec, true, nil
		o.gain = opusOutputGain(id)
		o.discard = int(binary.LittleEndian.Uint16(id[10:12]))
		rate, comment = opusRate, hs[1][8:]
	}
	if o.rate != 0 && rate != o.rate {
		return fmt.Errorf("%w: the sample rate changed from %d to %d Hz between songs", ErrUnsupported, o.rate, rate)
	}
	o.rate, o.channels = rate, channels
	o.title = commentTitle(comment)
	o.packets = hs[need:]
	o.pcm, o.pcmOff = o.pcm[:0], 0
	return nil
}

// commentTitle is "Artist - Title" from a Vorbis comment, as stations
// write their ICY titles; the comment was checked (checkVorbisComment).
func commentTitle(b []byte) string {
	le := binary.LittleEndian
	r := &reader{b: b, ok: true}
	r.bytes(r.u32(le))
	var title, artist string
	for range r.u32(le) {
		c := r.bytes(r.u32(le))
		if !r.ok {
			break
		}
		k, v, _ := strings.Cut(string(c), "=")
		switch strings.ToUpper(k) {
		case "TITLE":
			title = clean(v)
		case "ARTIST":
			artist = clean(v)
		}
	}
	if artist != "" && title != "" {
		return artist + " - " + title
	}
	return title
}

func (o *oggLive) stream(samples [][2]float64) (int, bool) {
	n := 0
	for n < len(samples) {
		if o.pcmOff >= len(o.pcm) {
			if !o.decodeNext() {
				break
			}
			continue
		}
		frames := (len(o.pcm) - o.pcmOff) / o.channels
		if o.discard > 0 {
			d := min(o.discard, frames)
			o.discard -= d
			o.pcmOff += d * o.channels
			continue
		}
		take := min(frames, len(samples)-n)
		right := 0
		switch {
		case o.channels == 2 || o.channels == 4:
			right = 1
		case o.channels > 2: // Vorbis order: left, centre, right, …
			right = 2
		}
		for i := range take {
			j := o.pcmOff + i*o.channels
			samples[n+i] = [2]float64{float64(o.pcm[j]) * o.gain, float64(o.pcm[j+right]) * o.gain}
		}
		n += take
		o.pcmOff += take * o.channels
	}
	return n, n > 0 || (o.err == nil && !o.eof)
}

// decodeNext decodes the next packet into pcm, following the chain; false at
// the end of the stream or on an error.
func (o *oggLive) decodeNext() bool {
	for len(o.packets) == 0 {
		h, body, err := o.nextPage(false)
		if err != nil {
			if errors.Is(err, io.EOF) {
				o.eof = true
			} else {
				o.err = err
			}
			return false
		}
		if h.bos {
			if o.err = o.startLink(h, body); o.err != nil {
				return false
			}
			continue
		}
		if o.packets, err = o.pk.add(h, body); err != nil {
			o.err = err
			return false
		}
	}
	p := o.packets[0]
	o.packets = o.packets[1:]
	if o.isOpus {
		if size := opusMaxFrame * o.channels; cap(o.pcm) < size {
			o.pcm = make([]float32, size)
		}
		o.pcm = o.pcm[:opusMaxFrame*o.channels]
		n, err := o.opus.DecodeToFloat32(p, o.pcm)
		if err != nil {
			o.err = fmt.Errorf("opus: %w", err)
			return false
		}
		o.pcm, o.pcmOff = o.pcm[:n*o.channels], 0
		return true
	}
	if size := o.vorbis.BufferSize(); cap(o.pcm) < size {
		o.pcm = make([]float32, size)
	}
	out, err := o.vorbis.DecodeInto(p, o.pcm[:cap(o.pcm)])
	if err != nil {
		o.err = fmt.Errorf("vorbis: %w: %v", ErrCorrupt, err)
		return false
	}
	o.pcm, o.pcmOff = out, 0
	return true
}
