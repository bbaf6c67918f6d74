// Package mp4test writes small MP4 files for tests: an AAC track from an
// ADTS file's frames, with the boxes a test needs around it (a QuickTime
// chapter track, Nero chapters, a cover), laid out for streaming (the moov
// box first) and open to damage box by box. It follows ISO/IEC 14496-12
// and -14 and Apple's QuickTime chapter convention; only tests use it.
package mp4test

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

// Box is an MP4 box of the payloads joined, with a 32-bit size.
func Box(typ string, payload ...[]byte) []byte {
	p := bytes.Join(payload, nil)
	return append(append(U32(uint32(8+len(p))), typ...), p...)
}

// LargeHeader is a box header with a 64-bit size (size field 1), claiming
// size bytes whatever follows.
func LargeHeader(typ string, size uint64) []byte {
	return append(append(U32(1), typ...), U64(size)...)
}

// Full is a full box's version and flags before its payload.
func Full(version byte, flags uint32, payload ...[]byte) []byte {
	return append(U32(uint32(version)<<24|flags), bytes.Join(payload, nil)...)
}

func U16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func U32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func U64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// Audio is an AAC track's frames (raw data blocks) and configuration.
type Audio struct {
	ASC    []byte // AudioSpecificConfig
	Rate   uint32
	Frames [][]byte
}

// ADTS takes the frames of an ADTS file (headers removed) and builds the
// AudioSpecificConfig from the first header.
func ADTS(data []byte) (Audio, error) {
	var a Audio
	for off := 0; off+7 <= len(data); {
		h := data[off:]
		if h[0] != 0xff || h[1]&0xf6 != 0xf0 {
			return a, fmt.Errorf("no ADTS header at %d", off)
		}
		n := int(h[3]&3)<<11 | int(h[4])<<3 | int(h[5])>>5
		hdr := 7
		if h[1]&1 == 0 {
			hdr = 9
		}
		if n < hdr || off+n > len(data) {
			break
		}
		if a.ASC == nil {
			object, freq, ch := h[2]>>6+1, h[2]>>2&15, h[2]&1<<2|h[3]>>6
			a.ASC = []byte{object<<3 | freq>>1, freq<<7 | ch<<3}
			a.Rate = []uint32{96000, 88200, 64000, 48000, 44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000, 7350}[freq]
		}
		a.Frames = append(a.Frames, data[off+hdr:off+n])
		off += n
	}
	if len(a.Frames) == 0 {
		return a, fmt.Errorf("no ADTS frames")
	}
	return a, nil
}

// Chapter is a QuickTime chapter track's sample: a title lasting Duration
// in the audio's timescale.
type Chapter struct {
	Title    string
	Duration uint32
}

// File describes an M4A file.
type File struct {
	Audio Audio
	// Head are boxes between the ftyp and the moov box.
	Head []byte
	// Chapters become a text track the audio track's tref/chap names.
	Chapters []Chapter
	// Interleave puts chapter sample k after the audio's chunk k in the
	// mdat box, as some muxers do; otherwise they follow all the audio.
	Interleave bool
	// UserData are boxes for moov/udta (a chpl box, a meta box).
	UserData [][]byte
	// ChapterTable, when set, may change or drop the chapter track's
	// sample table boxes (by type: stsd, stts, stsc, stsz, stco) before
	// they are written.
	ChapterTable func(boxes map[string][]byte)
	// AudioTable is ChapterTable for the audio track.
	AudioTable func(boxes map[string][]byte)
	// Edts is the audio track's edts box, if any.
	Edts []byte
	// FramesPerChunk is how many audio frames a chunk holds (10 if 0).
	FramesPerChunk int
}

const (
	audioID = 1
	textID  = 2
)

// M4A lays the file out as ftyp, moov, mdat: ready to stream.
func M4A(f File) []byte {
	per := f.FramesPerChunk
	if per == 0 {
		per = 10
	}
	ftyp := Box("ftyp", []byte("M4A "), U32(0), []byte("M4A isomiso2"))
	// The moov box's size does not depend on the offsets it holds: build
	// it once to learn where the mdat's payload starts, then for real.
	moov := f.moov(per, 0)
	base := uint32(len(ftyp) + len(f.Head) + len(moov) + 8)
	moov = f.moov(per, base)
	mdat, _, _ := f.mdat(per, base)
	return bytes.Join([][]byte{ftyp, f.Head, moov, Box("mdat", mdat)}, nil)
}

// mdat lays out the samples and says where each audio chunk and chapter
// sample starts.
func (f File) mdat(per int, base uint32) (p []byte, audio, text []uint32) {
	k := 0
	for i := 0; i < len(f.Audio.Frames); i += per {
		audio = append(audio, base+uint32(len(p)))
		for _, fr := range f.Audio.Frames[i:min(i+per, len(f.Audio.Frames))] {
			p = append(p, fr...)
		}
		if f.Interleave && k < len(f.Chapters) {
			text = append(text, base+uint32(len(p)))
			p = append(p, textSample(f.Chapters[k].Title)...)
			k++
		}
	}
	for ; k < len(f.Chapters); k++ {
		text = append(text, base+uint32(len(p)))
		p = append(p, textSample(f.Chapters[k].Title)...)
	}
	return p, audio, text
}

func textSample(title string) []byte {
	return append(U16(uint16(len(title))), title...)
}

func (f File) moov(per int, base uint32) []byte {
	_, audioChunks, textChunks := f.mdat(per, base)
	rate := f.Audio.Rate
	n := uint32(len(f.Audio.Frames))
	mvhd := Box("mvhd", Full(0, 0, U32(0), U32(0), U32(rate), U32(n*1024), U32(0x10000), U16(0x100), make([]byte, 10+36+24), U32(3)))
	var sizes []byte
	for _, fr := range f.Audio.Frames {
		sizes = append(sizes, U32(uint32(len(fr)))...)
	}
	var stco []byte
	for _, o := range audioChunks {
		stco = append(stco, U32(o)...)
	}
	last := uint32(len(f.Audio.Frames) % per)
	stsc := Full(0, 0, U32(1), U32(1), U32(uint32(per)), U32(1))
	if last != 0 && len(audioChunks) > 1 {
		stsc = Full(0, 0, U32(2), U32(1), U32(uint32(per)), U32(1), U32(uint32(len(audioChunks))), U32(last), U32(1))
	} else if last != 0 {
		stsc = Full(0, 0, U32(1), U32(1), U32(last), U32(1))
	}
	esds := Box("esds", Full(0, 0, descriptor(3, U16(1), []byte{0},
		descriptor(4, []byte{0x40, 0x15, 0, 0, 0}, U32(0), U32(0), descriptor(5, f.Audio.ASC)),
		descriptor(6, []byte{2}))))
	mp4a := Box("mp4a", make([]byte, 6), U16(1), make([]byte, 8), U16(2), U16(16), U16(0), U16(0), U32(rate<<16), esds)
	audioStbl := table(f.AudioTable, map[string][]byte{
		"stsd": Box("stsd", Full(0, 0, U32(1), mp4a)),
		"stts": Box("stts", Full(0, 0, U32(1), U32(n), U32(1024))),
		"stsc": Box("stsc", stsc),
		"stsz": Box("stsz", Full(0, 0, U32(0), U32(n), sizes)),
		"stco": Box("stco", Full(0, 0, U32(uint32(len(audioChunks))), stco)),
	})
	tref := f.Edts
	if len(f.Chapters) > 0 {
		tref = append(tref, Box("tref", Box("chap", U32(textID)))...)
	}
	moov := [][]byte{mvhd, trak(audioID, "soun", rate, n*1024, tref, audioStbl)}
	if len(f.Chapters) > 0 {
		moov = append(moov, f.chapterTrak(textChunks))
	}
	if len(f.UserData) > 0 {
		moov = append(moov, Box("udta", f.UserData...))
	}
	return Box("moov", moov...)
}

func (f File) chapterTrak(offsets []uint32) []byte {
	var stts, stsz, stco []byte
	total := uint32(0)
	for i, c := range f.Chapters {
		stts = append(stts, append(U32(1), U32(c.Duration)...)...)
		stsz = append(stsz, U32(uint32(len(textSample(c.Title))))...)
		stco = append(stco, U32(offsets[i])...)
		total += c.Duration
	}
	n := U32(uint32(len(f.Chapters)))
	boxes := map[string][]byte{
		"stsd": Box("stsd", Full(0, 0, U32(1), Box("text", make([]byte, 6), U16(1), make([]byte, 51)))),
		"stts": Box("stts", Full(0, 0, n, stts)),
		"stsc": Box("stsc", Full(0, 0, U32(1), U32(1), U32(1), U32(1))),
		"stsz": Box("stsz", Full(0, 0, U32(0), n, stsz)),
		"stco": Box("stco", Full(0, 0, n, stco)),
	}
	return trak(textID, "text", f.Audio.Rate, total, nil, table(f.ChapterTable, boxes))
}

// table is an stbl box of the boxes after edit changed them.
func table(edit func(map[string][]byte), boxes map[string][]byte) []byte {
	if edit != nil {
		edit(boxes)
	}
	var stbl [][]byte
	for _, typ := range []string{"stsd", "stts", "stsc", "stsz", "stco", "co64"} {
		stbl = append(stbl, boxes[typ])
	}
	return Box("stbl", stbl...)
}

// trak is a track; before is boxes between its tkhd and mdia (edts, tref).
func trak(id uint32, handler string, scale, duration uint32, before, stbl []byte) []byte {
	tkhd := Box("tkhd", Full(0, 7, U32(0), U32(0), U32(id), U32(0), U32(duration), make([]byte, 8+8+36+8)))
	mdhd := Box("mdhd", Full(0, 0, U32(0), U32(0), U32(scale), U32(duration), U16(0x55c4), U16(0)))
	hdlr := Box("hdlr", Full(0, 0, U32(0), []byte(handler), make([]byte, 12), []byte{0}))
	return Box("trak", tkhd, before, Box("mdia", mdhd, hdlr, Box("minf", stbl)))
}

// descriptor is an ISO/IEC 14496-1 descriptor with a 4-byte length.
func descriptor(tag byte, body ...[]byte) []byte {
	p := bytes.Join(body, nil)
	n := len(p)
	return append([]byte{tag, byte(n>>21&0x7f) | 0x80, byte(n>>14&0x7f) | 0x80, byte(n>>7&0x7f) | 0x80, byte(n & 0x7f)}, p...)
}

// Chpl is a Nero chapter box: titles starting at the given times in
// units of 100 ns.
func Chpl(titles []string, starts []uint64) []byte {
	p := Full(1, 0, U32(0), []byte{byte(len(titles))})
	for i, t := range titles {
		p = append(append(append(p, U64(starts[i])...), byte(len(t))), t...)
	}
	return Box("chpl", p)
}

// Meta is a udta meta box with iTunes items (ilst).
func Meta(items ...[]byte) []byte {
	hdlr := Box("hdlr", Full(0, 0, U32(0), []byte("mdir"), []byte("appl"), make([]byte, 9)))
	return Box("meta", Full(0, 0, hdlr, Box("ilst", items...)))
}

// Item is an iTunes item holding one data box of the given kind (1 text,
// 13 JPEG, 14 PNG).
func Item(typ string, kind uint32, value []byte) []byte {
	return Box(typ, Box("data", U32(kind), U32(0), value))
}
