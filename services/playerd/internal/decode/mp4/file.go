package mp4

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

// File is an MP4 file's first AAC audio track with what plays it.
type File struct {
	rd reader
	// Config is the track's AudioSpecificConfig.
	Config []byte
	// Timescale is the track's media timescale (mdhd).
	Timescale uint32
	// Samples counts the track's samples (AAC frames).
	Samples int
	// Duration is the sum of the samples' durations in Timescale units.
	Duration uint64
	// Start and Length are the edit: the media time where playing starts
	// (the encoder delay) and how long it plays, in Timescale units;
	// Length is 0 when the file does not tell.
	Start, Length uint64
	Tags          Tags
	Chapters      []Chapter
	// SMPB is iTunes' gapless information (the iTunSMPB item), in samples
	// at the decoder's output rate; Valid is false without it.
	SMPB struct {
		Delay, Padding, Samples uint64
		Valid                   bool
	}

	table sampleTable
}

// Tags are the iTunes metadata items a library shows.
type Tags struct {
	Title, Artist, Album, AlbumArtist string
	Cover                             []byte
	CoverMIME                         string
}

// Chapter is a named span of the presentation, in seconds from its start.
type Chapter struct {
	Title      string
	Start, End float64
}

type track struct {
	id        uint32
	handler   string
	timescale uint32
	duration  uint64
	stbl      box
	edts      box
	hasEdts   bool
	chapterID uint32 // tref/chap
	entry     string // the first sample entry's type
	config    []byte
}

// Open reads the file's boxes. It reads headers and small boxes only; the
// sample table is read later, as playing needs it.
func Open(r io.ReaderAt, size int64) (*File, error) { return open(r, size, true) }

// OpenAudio is Open for a stream, which keeps the audio track's boxes and
// no more: it reads neither tags nor chapters.
func OpenAudio(r io.ReaderAt, size int64) (*File, error) { return open(r, size, false) }

func open(r io.ReaderAt, size int64, extras bool) (*File, error) {
	f := &File{rd: reader{r: r, size: size}}
	rd := &f.rd
	// The top level is read up to the moov box only: a stream's reader
	// holds the file up to there and no further.
	var moov box
	found := false
	for off, first := int64(0), true; off < size && !found; first = false {
		b, err := rd.topBox(off, size)
		if err != nil {
			return nil, err
		}
		if first && b.typ != "ftyp" && b.typ != "moov" && b.typ != "free" && b.typ != "wide" {
			return nil, fmt.Errorf("%w: not an MP4 file", ErrUnsupported)
		}
		moov, found = b, b.typ == "moov"
		off = b.end
	}
	if !found {
		return nil, fmt.Errorf("%w: no moov box (a fragmented or unfinished file)", ErrUnsupported)
	}
	kids, err := rd.children(moov.start, moov.end)
	if err != nil {
		return nil, err
	}
	movieScale := uint32(0)
	if mvhd, ok := find(kids, "mvhd"); ok {
		fl, _, err := rd.timed(mvhd)
		if err != nil {
			return nil, err
		}
		movieScale = fl.u32()
	}
	// A track that does not read is left out unless it is the audio that
	// plays (the first audio track): a damaged chapter or cover track costs
	// its extras, not the file.
	var tracks []track
	var trackErr error
	audioSeen := false
	for _, k := range kids {
		if k.typ != "trak" {
			continue
		}
		t, err := rd.readTrack(k)
		if t.handler == "soun" && !audioSeen {
			if err != nil {
				return nil, err
			}
			audioSeen = true
		}
		if err != nil {
			trackErr = cmp.Or(trackErr, err)
			continue
		}
		tracks = append(tracks, t)
	}
	var audio *track
	for i := range tracks {
		if tracks[i].handler == "soun" {
			audio = &tracks[i]
			break
		}
	}
	if audio == nil && trackErr != nil {
		return nil, trackErr
	}
	if audio == nil {
		return nil, fmt.Errorf("%w: no audio track", ErrUnsupported)
	}
	if audio.entry != "mp4a" {
		return nil, fmt.Errorf("%w: audio in %q, not AAC", ErrUnsupported, audio.entry)
	}
	if audio.config == nil {
		return nil, fmt.Errorf("%w: AAC track without a decoder configuration", ErrCorrupt)
	}
	if audio.timescale == 0 {
		return nil, fmt.Errorf("%w: timescale 0", ErrCorrupt)
	}
	f.Config, f.Timescale = audio.config, audio.timescale
	if err := f.table.read(rd, audio.stbl); err != nil {
		return nil, err
	}
	f.Samples, f.Duration = f.table.samples, f.table.duration
	if audio.hasEdts {
		if err := f.readEdit(audio.edts, movieScale); err != nil {
			return nil, err
		}
	}
	if !extras {
		return f, nil
	}
	if udta, ok := find(kids, "udta"); ok {
		f.readUserData(udta)
	}
	if len(f.Chapters) == 0 && audio.chapterID != 0 {
		for i := range tracks {
			if tracks[i].id == audio.chapterID && tracks[i].id != audio.id {
				// A chapter track that does not read leaves the file
				// without chapters: it plays as one track.
				f.Chapters, _ = rd.chapterTrack(&tracks[i])
				break
			}
		}
	}
	f.fixChapters()
	return f, nil
}

// topBox reads the one box at off of a file of size bytes.
func (rd *reader) topBox(off, size int64) (box, error) {
	if rd.top++; rd.top > maxTopBoxes {
		return box{}, fmt.Errorf("%w: more than %d boxes before the moov box", ErrCorrupt, maxTopBoxes)
	}
	rd.boxes++
	return rd.header(off, size)
}

// timed reads a box that starts with a version, flags and the creation and
// modification times (mvhd, tkhd, mdhd), up to the field after them.
func (rd *reader) timed(b box) (*fields, uint8, error) {
	p, err := rd.read(b, 256)
	if err != nil {
		return nil, 0, err
	}
	fl := &fields{p: p}
	v := fl.u8()
	if v == 1 {
		fl.bytes(3 + 16)
	} else {
		fl.bytes(3 + 8)
	}
	return fl, v, nil
}

func (rd *reader) readTrack(trak box) (track, error) {
	var t track
	kids, err := rd.children(trak.start, trak.end)
	if err != nil {
		return t, err
	}
	if tkhd, ok := find(kids, "tkhd"); ok {
		fl, _, err := rd.timed(tkhd)
		if err != nil {
			return t, err
		}
		t.id = fl.u32()
	}
	if b, ok, err := rd.path(trak, "tref", "chap"); err != nil {
		return t, err
	} else if ok {
		p, err := rd.read(b, 4096)
		if err != nil {
			return t, err
		}
		if len(p) >= 4 {
			fl := fields{p: p}
			t.chapterID = fl.u32()
		}
	}
	t.edts, t.hasEdts = find(kids, "edts")
	mdia, ok := find(kids, "mdia")
	if !ok {
		return t, nil
	}
	mk, err := rd.children(mdia.start, mdia.end)
	if err != nil {
		return t, err
	}
	if hdlr, ok := find(mk, "hdlr"); ok {
		p, err := rd.read(hdlr, maxSmallBox)
		if err != nil {
			return t, err
		}
		if len(p) >= 12 {
			t.handler = string(p[8:12])
		}
	}
	if mdhd, ok := find(mk, "mdhd"); ok {
		fl, v, err := rd.timed(mdhd)
		if err != nil {
			return t, err
		}
		t.timescale = fl.u32()
		if v == 1 {
			t.duration = fl.u64()
		} else {
			t.duration = uint64(fl.u32())
		}
	}
	stbl, ok, err := rd.path(mdia, "minf", "stbl")
	if err != nil || !ok {
		return t, err
	}
	t.stbl = stbl
	stsd, ok, err := rd.path(stbl, "stsd")
	if err != nil || !ok {
		return t, err
	}
	if stsd.size() < 8 {
		return t, fmt.Errorf("%w: stsd of %d bytes", ErrCorrupt, stsd.size())
	}
	entries, err := rd.children(stsd.start+8, stsd.end)
	if err != nil || len(entries) == 0 {
		return t, err
	}
	t.entry = entries[0].typ
	if t.handler == "soun" && t.entry == "mp4a" {
		t.config, err = rd.audioConfig(entries[0])
	}
	return t, err
}

// audioConfig finds the AudioSpecificConfig in an mp4a sample entry's esds
// (directly, or in a QuickTime wave box).
func (rd *reader) audioConfig(mp4a box) ([]byte, error) {
	var head [28]byte
	if mp4a.size() < 28 {
		return nil, fmt.Errorf("%w: mp4a entry of %d bytes", ErrCorrupt, mp4a.size())
	}
	if err := rd.readAt(head[:], mp4a.start); err != nil {
		return nil, err
	}
	skip := int64(28)
	switch version := int(head[8])<<8 | int(head[9]); version {
	case 1:
		skip += 16
	case 2:
		skip += 36
	}
	if skip > mp4a.size() {
		return nil, fmt.Errorf("%w: mp4a entry of %d bytes", ErrCorrupt, mp4a.size())
	}
	kids, err := rd.children(mp4a.start+skip, mp4a.end)
	if err != nil {
		return nil, err
	}
	esds, ok := find(kids, "esds")
	if !ok {
		if wave, ok := find(kids, "wave"); ok {
			if esds, ok, err = rd.path(wave, "esds"); err != nil || !ok {
				return nil, err
			}
		} else {
			return nil, nil
		}
	}
	p, err := rd.read(esds, maxSmallBox)
	if err != nil {
		return nil, err
	}
	return decoderSpecificInfo(p)
}

// decoderSpecificInfo digs the DecoderSpecificInfo out of an esds payload
// (ISO/IEC 14496-1 descriptors).
func decoderSpecificInfo(p []byte) ([]byte, error) {
	fl := fields{p: p}
	fl.u32() // version, flags
	descriptor := func() (tag uint8, body []byte) {
		tag = fl.u8()
		n := 0
		for range 4 {
			b := fl.u8()
			n = n<<7 | int(b&0x7f)
			if b&0x80 == 0 {
				break
			}
		}
		return tag, fl.bytes(n)
	}
	tag, es := descriptor()
	if fl.bad || tag != 3 {
		return nil, fmt.Errorf("%w: esds without an ES descriptor", ErrCorrupt)
	}
	fl = fields{p: es}
	fl.u16() // ES_ID
	flags := fl.u8()
	if flags&0x80 != 0 {
		fl.u16()
	}
	if flags&0x40 != 0 {
		fl.bytes(int(fl.u8()))
	}
	if flags&0x20 != 0 {
		fl.u16()
	}
	tag, dc := descriptor()
	if fl.bad || tag != 4 {
		return nil, fmt.Errorf("%w: esds without a decoder config", ErrCorrupt)
	}
	fl = fields{p: dc}
	oti := fl.u8()
	if oti != 0x40 && oti != 0x66 && oti != 0x67 && oti != 0x68 {
		return nil, fmt.Errorf("%w: object type 0x%02x in an mp4a track, not AAC", ErrUnsupported, oti)
	}
	fl.bytes(12)
	tag, dsi := descriptor()
	if fl.bad || tag != 5 || len(dsi) < 2 {
		return nil, fmt.Errorf("%w: esds without a decoder specific info", ErrCorrupt)
	}
	return dsi, nil
}

// readEdit takes the first edit that plays media: where it starts in the
// media and for how long.
func (f *File) readEdit(edts box, movieScale uint32) error {
	elst, ok, err := f.rd.path(edts, "elst")
	if err != nil || !ok {
		return err
	}
	p, err := f.rd.read(elst, maxSmallBox)
	if err != nil {
		return err
	}
	fl := fields{p: p}
	v := fl.u8()
	fl.bytes(3)
	n := fl.u32()
	for i := uint32(0); i < n && !fl.bad; i++ {
		var dur uint64
		var start int64
		if v == 1 {
			dur, start = fl.u64(), int64(fl.u64())
		} else {
			dur, start = uint64(fl.u32()), int64(int32(fl.u32()))
		}
		fl.u32() // media rate
		if fl.bad {
			break
		}
		if start < 0 {
			continue // an empty edit: a delay before the media
		}
		f.Start = uint64(start)
		if movieScale > 0 && dur > 0 {
			f.Length = scale(dur, uint64(f.Timescale), uint64(movieScale))
		}
		break
	}
	if f.Start > f.Duration {
		return fmt.Errorf("%w: edit starts at %d of %d", ErrCorrupt, f.Start, f.Duration)
	}
	if f.Length > f.Duration-f.Start {
		f.Length = f.Duration - f.Start
	}
	return nil
}

// scale is v*num/den, or the largest uint64 when that does not fit.
func scale(v, num, den uint64) uint64 {
	hi, lo := bits.Mul64(v, num)
	if hi >= den {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, den)
	return q
}

// readUserData reads moov/udta: the iTunes tags in meta/ilst and Nero
// chapters (chpl). Damage there costs the tags or the chapters, not the
// file.
func (f *File) readUserData(udta box) {
	rd := &f.rd
	kids, err := rd.children(udta.start, udta.end)
	if err != nil {
		return
	}
	if chpl, ok := find(kids, "chpl"); ok {
		if p, err := rd.read(chpl, maxSmallBox); err == nil {
			f.Chapters = neroChapters(p)
		}
	}
	if meta, ok := find(kids, "meta"); ok {
		if err := f.readMeta(meta); err != nil {
			f.Tags, f.SMPB = Tags{}, File{}.SMPB
		}
	}
}

func (f *File) readMeta(meta box) error {
	rd := &f.rd
	// meta is a full box in MP4 and a plain one in QuickTime files.
	start := meta.start
	var peek [8]byte
	if meta.size() >= 12 {
		if err := rd.readAt(peek[:], meta.start+4); err != nil {
			return err
		}
		if string(peek[4:8]) == "hdlr" || string(peek[4:8]) == "ilst" {
			start += 4
		}
	}
	mk, err := rd.children(start, meta.end)
	if err != nil {
		return err
	}
	ilst, ok := find(mk, "ilst")
	if !ok {
		return nil
	}
	return f.readItems(ilst)
}

func neroChapters(p []byte) []Chapter {
	fl := fields{p: p}
	if fl.u8() == 1 {
		fl.bytes(3 + 4)
	} else {
		fl.bytes(3)
	}
	n := int(fl.u8())
	var out []Chapter
	for range n {
		start := fl.u64()
		title := fl.bytes(int(fl.u8()))
		if fl.bad {
			break
		}
		out = append(out, Chapter{Title: string(title), Start: float64(start) / 1e7})
	}
	return out
}

func (f *File) readItems(ilst box) error {
	rd := &f.rd
	items, err := rd.children(ilst.start, ilst.end)
	if err != nil {
		return err
	}
	for _, it := range items {
		var dst *string
		switch it.typ {
		case "\xa9nam":
			dst = &f.Tags.Title
		case "\xa9ART":
			dst = &f.Tags.Artist
		case "\xa9alb":
			dst = &f.Tags.Album
		case "aART":
			dst = &f.Tags.AlbumArtist
		case "covr":
		case "----":
			if err := f.readFreeform(it); err != nil {
				return err
			}
			continue
		default:
			continue
		}
		kids, err := rd.children(it.start, it.end)
		if err != nil {
			return err
		}
		data, ok := find(kids, "data")
		if !ok || data.size() < 8 {
			continue
		}
		limit := int64(maxSmallBox)
		if dst == nil {
			limit = maxCover
		}
		if data.size() > limit {
			continue // an oversized item is skipped, the file still plays
		}
		p, err := rd.read(data, limit)
		if err != nil {
			return err
		}
		kind, value := uint32(p[1])<<16|uint32(p[2])<<8|uint32(p[3]), p[8:]
		if dst != nil {
			*dst = string(value)
			continue
		}
		if f.Tags.Cover == nil && len(value) > 0 {
			f.Tags.Cover, f.Tags.CoverMIME = value, imageMIME(kind, value)
		}
	}
	return nil
}

// readFreeform reads a "----" item; only iTunSMPB matters: " 00000000
// DELAY PADDING SAMPLES ..." in hexadecimal.
func (f *File) readFreeform(it box) error {
	rd := &f.rd
	kids, err := rd.children(it.start, it.end)
	if err != nil {
		return err
	}
	name, ok1 := find(kids, "name")
	data, ok2 := find(kids, "data")
	if !ok1 || !ok2 || name.size() < 4 || data.size() < 8 {
		return nil
	}
	n, err := rd.read(name, 1024)
	if err != nil || string(n[4:]) != "iTunSMPB" {
		return err
	}
	d, err := rd.read(data, 1024)
	if err != nil {
		return err
	}
	var v [4]uint64
	fs := strings.Fields(string(d[8:]))
	if len(fs) < 4 {
		return nil
	}
	for i := range v {
		if v[i], err = strconv.ParseUint(fs[i], 16, 64); err != nil {
			return nil
		}
	}
	f.SMPB.Delay, f.SMPB.Padding, f.SMPB.Samples, f.SMPB.Valid = v[1], v[2], v[3], true
	return nil
}

func imageMIME(kind uint32, p []byte) string {
	switch {
	case kind == 14 || strings.HasPrefix(string(p), "\x89PNG"):
		return "image/png"
	case kind == 27 || strings.HasPrefix(string(p), "BM"):
		return "image/bmp"
	}
	return "image/jpeg"
}

// chapterTrack reads a QuickTime chapter track: each sample is a title (a
// 16-bit length and the text), lasting its sample's duration.
func (rd *reader) chapterTrack(t *track) ([]Chapter, error) {
	if t.timescale == 0 {
		return nil, nil
	}
	var st sampleTable
	if err := st.read(rd, t.stbl); err != nil {
		return nil, err
	}
	if st.samples > maxChapters {
		return nil, fmt.Errorf("%w: %d chapters", ErrCorrupt, st.samples)
	}
	var out []Chapter
	var at uint64
	s := st.cursor(rd)
	for i := range st.samples {
		off, size, err := s.sample(i)
		if err != nil {
			return nil, err
		}
		title := ""
		if size >= 2 && size <= 4096 {
			p := make([]byte, size)
			if err := rd.readAt(p, off); err != nil {
				return nil, err
			}
			n := int(p[0])<<8 | int(p[1])
			if n <= len(p)-2 {
				title = string(p[2 : 2+n])
			}
		}
		out = append(out, Chapter{Title: title, Start: float64(at) / float64(t.timescale)})
		at += uint64(st.sampleDuration(i))
	}
	return out, nil
}

// fixChapters gives each chapter its end (the next one's start, the last
// one the end of the presentation) and drops empty and disordered ones.
func (f *File) fixChapters() {
	total := f.Seconds()
	var out []Chapter
	for i, c := range f.Chapters {
		end := total
		if i+1 < len(f.Chapters) {
			end = min(f.Chapters[i+1].Start, total)
		}
		if c.Start < 0 || end <= c.Start || (len(out) > 0 && c.Start < out[len(out)-1].End) {
			continue
		}
		c.End = end
		if c.Title == "" {
			c.Title = "Chapter " + strconv.Itoa(len(out)+1)
		}
		out = append(out, c)
	}
	f.Chapters = out
}

// Seconds is how long the presentation plays.
func (f *File) Seconds() float64 {
	n := f.Length
	if n == 0 {
		n = f.Duration - f.Start
	}
	return float64(n) / float64(f.Timescale)
}
