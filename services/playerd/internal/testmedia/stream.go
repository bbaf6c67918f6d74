package testmedia

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
)

// MP3Frames returns the audio frames of an MP3 file without its ID3v2 tag
// at the front and ID3v1 tag at the end, so that copies can be joined into
// an endless radio stream.
func MP3Frames(file []byte) []byte {
	if len(file) >= 10 && string(file[:3]) == "ID3" {
		n := int(file[6])<<21 | int(file[7])<<14 | int(file[8])<<7 | int(file[9]) + 10
		file = file[min(n, len(file)):]
	}
	if len(file) >= 128 && string(file[len(file)-128:len(file)-125]) == "TAG" {
		file = file[:len(file)-128]
	}
	return file
}

// ICYMeta is an ICY metadata block naming title as the StreamTitle: a
// length byte in 16-byte units, then the text padded with zeros. An empty
// title is the empty block (a single zero byte), sent when nothing changed.
func ICYMeta(title string) []byte {
	if title == "" {
		return []byte{0}
	}
	text := "StreamTitle='" + title + "';"
	n := (len(text) + 15) / 16
	return append(append([]byte{byte(n)}, text...), make([]byte, n*16-len(text))...)
}

// OggLink is one link of a chained Ogg stream: the packets of one logical
// stream (its headers first).
type OggLink struct {
	Headers [][]byte // identification, comment (and setup for Vorbis)
	Audio   [][]byte
}

// OggPackets splits an Ogg Vorbis or Opus file of one logical stream into
// its header and audio packets.
func OggPackets(file []byte) (OggLink, error) {
	var link OggLink
	var pending []byte
	r := bytes.NewReader(file)
	need := 0
	var all [][]byte
	for r.Len() > 0 {
		var h [27]byte
		if _, err := io.ReadFull(r, h[:]); err != nil || string(h[:4]) != "OggS" {
			return link, errors.New("testmedia: not an Ogg file")
		}
		segs := make([]byte, h[26])
		io.ReadFull(r, segs)
		for _, l := range segs {
			b := make([]byte, l)
			io.ReadFull(r, b)
			pending = append(pending, b...)
			if l < 255 {
				all = append(all, pending)
				pending = nil
			}
		}
	}
	switch {
	case len(all) > 0 && bytes.HasPrefix(all[0], []byte("\x01vorbis")):
		need = 3
	case len(all) > 0 && bytes.HasPrefix(all[0], []byte("OpusHead")):
		need = 2
	default:
		return link, errors.New("testmedia: neither Vorbis nor Opus")
	}
	link.Headers, link.Audio = all[:need], all[need:]
	return link, nil
}

// WithTitle returns the link with its comment header replaced by one that
// carries title (and artist, when not empty).
func (l OggLink) WithTitle(artist, title string) OggLink {
	var c []byte
	prefix := []byte("OpusTags")
	vorbis := bytes.HasPrefix(l.Headers[0], []byte("\x01vorbis"))
	if vorbis {
		prefix = []byte("\x03vorbis")
	}
	c = append(c, prefix...)
	vendor := "storybox test"
	c = binary.LittleEndian.AppendUint32(c, uint32(len(vendor)))
	c = append(c, vendor...)
	comments := []string{"TITLE=" + title}
	if artist != "" {
		comments = append(comments, "ARTIST="+artist)
	}
	c = binary.LittleEndian.AppendUint32(c, uint32(len(comments)))
	for _, s := range comments {
		c = binary.LittleEndian.AppendUint32(c, uint32(len(s)))
		c = append(c, s...)
	}
	if vorbis {
		c = append(c, 1) // framing bit
	}
	h := append([][]byte(nil), l.Headers...)
	h[1] = c
	return OggLink{Headers: h, Audio: l.Audio}
}

// OggChain writes links as one chained Ogg stream, each link its own
// logical stream (serial numbers 1, 2, …), as an Icecast server sends a
// station whose songs change.
func OggChain(links ...OggLink) []byte {
	var out []byte
	for i, l := range links {
		w := oggWriter{serial: uint32(i + 1), flags: 2}
		w.packets(l.Headers[:1])
		w.flush(0)
		w.packets(l.Headers[1:])
		w.flush(0)
		for j := 0; j < len(l.Audio); j += 8 {
			w.packets(l.Audio[j:min(j+8, len(l.Audio))])
			if j+8 >= len(l.Audio) {
				w.flags |= 4 // end of stream
			}
			w.flush(int64(j+8) * 960)
		}
		out = append(out, w.out...)
	}
	return out
}

// oggWriter lays packets out in pages of at most 255 segments; a packet
// that does not fit continues on the next page.
type oggWriter struct {
	serial, seq uint32
	flags       byte // of the next page
	segs, body  []byte
	out         []byte
}

func (w *oggWriter) packets(ps [][]byte) {
	for _, p := range ps {
		for {
			n := min(len(p), 255)
			w.segs = append(w.segs, byte(n))
			w.body = append(w.body, p[:n]...)
			p = p[n:]
			done := n < 255 // a packet of a multiple of 255 bytes ends with a 0 segment
			if len(w.segs) == 255 {
				w.page(-1)
				if !done {
					w.flags |= 1 // the next page continues this packet
				}
			}
			if done {
				break
			}
		}
	}
}

func (w *oggWriter) flush(granule int64) {
	if len(w.segs) > 0 {
		w.page(granule)
	}
}

func (w *oggWriter) page(granule int64) {
	h := make([]byte, 27, 27+len(w.segs)+len(w.body))
	copy(h, "OggS")
	h[5] = w.flags
	binary.LittleEndian.PutUint64(h[6:], uint64(granule))
	binary.LittleEndian.PutUint32(h[14:], w.serial)
	binary.LittleEndian.PutUint32(h[18:], w.seq)
	h[26] = byte(len(w.segs))
	h = append(append(h, w.segs...), w.body...)
	binary.LittleEndian.PutUint32(h[22:], oggCRC(h))
	w.out = append(w.out, h...)
	w.seq++
	w.segs, w.body = nil, nil
	w.flags = 0 // only the first page begins the stream, only the last ends it
}

var oggTable = func() (t [256]uint32) {
	for i := range t {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		t[i] = r
	}
	return t
}()

func oggCRC(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 ^ oggTable[byte(c>>24)^x]
	}
	return c
}
