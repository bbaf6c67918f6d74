package decode

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Each input below makes an upstream decoder or tag reader panic or
// allocate gigabytes (see the comments at the checks). Behind the boundary
// each is a plain error, and opening it allocates little: a panic caught
// after a 4 GB allocation would still take a Pi down.
func TestHostileHeadersAreRefusedCheaply(t *testing.T) {
	seed := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join("testdata", "seed", name))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	flacPic := seed("tone.flac")
	if i := bytes.Index(flacPic, []byte("image/png")); i > 0 {
		j := i + len("image/png")
		d := int(binary.BigEndian.Uint32(flacPic[j:]))
		binary.BigEndian.PutUint32(flacPic[j+4+d+16:], 0xfffffff0) // picture data length
	} else {
		t.Fatal("seed FLAC has no picture")
	}
	mp3Tag := seed("tone.mp3")
	copy(mp3Tag[6:10], []byte{0xff, 0xff, 0xff, 0xff}) // an impossible ID3v2 size: the tag is junk before the frames

	for name, c := range map[string]struct {
		data  []byte
		open  bool // else tags
		plays bool // the audio is sound: the boundary drops what lies
	}{
		"51-byte wav, fmt chunk of 0": {data: issueWAV(), open: true},
		"wav fmt chunk of 1.8 GB":     {data: wavWith(0x6fffffff, 0), open: true},
		"wav unknown chunk of -2 GB":  {data: wavWith(16, 0x80000000), open: true},
		"wav block align 0":           {data: wavAlign(0), open: true},
		"wav block align 1, 16-bit":   {data: wavAlign(1), open: true},
		"flac picture of 4 GB":        {data: flacPic, open: true, plays: true},
		"flac picture of 4 GB, tags":  {data: flacPic},
		"mp3 ID3v2 tag of 535 MB":     {data: mp3Tag, open: true, plays: true},
		"vorbis comment count 2^32-1": {data: oggComments(seed("tone.ogg"), "\x03vorbis", 0xffffffff), open: true},
		"opus picture of 4 GB, tags":  {data: oggPicture(seed("tone.opus"))},
		"opus comment count 2^32-1":   {data: oggComments(seed("tone.opus"), "OpusTags", 0xffffffff)},
	} {
		t.Run(name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var err error
			if c.open {
				var g *guarded
				if g, _, err = open(memSource(c.data)); err == nil {
					g.Close()
				}
			} else {
				_, err = readTagsFrom(memSource(c.data))
			}
			runtime.ReadMemStats(&after)
			if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
				t.Errorf("allocated %d MB on the way", n>>20)
			}
			if c.plays {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			var p *PanicError
			if errors.As(err, &p) {
				t.Errorf("refused only by a contained panic: %v", err)
			}
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Errorf("error %v is not ErrCorrupt", err)
			}
		})
	}
}

// A panic inside a decoder is an error for that file.
func TestPanicsAreContained(t *testing.T) {
	err := contain("open", func() error {
		var s []int
		_ = s[3]
		return nil
	})
	var p *PanicError
	if !errors.As(err, &p) || !errors.Is(err, ErrCorrupt) || p.Site == "unknown" {
		t.Fatalf("got %v", err)
	}
	if !bytes.Contains([]byte(p.Site), []byte("hostile_test.go")) {
		t.Errorf("site %q does not name the panicking line", p.Site)
	}
}

// issueWAV is the 51-byte file of the issue.
func issueWAV() []byte {
	b := []byte("RIFF\x2b\x00\x00\x00WAVEfmt \x00\x00\x00\x00")
	b = append(b, 1, 0, 2, 0, 0x44, 0xac, 0, 0, 0x10, 0xb1, 2, 0, 4, 0, 16, 0)
	return append(b, "LIST\xfe\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00"...)[:51]
}

func wavWith(fmtSize, listSize uint32) []byte {
	le := binary.LittleEndian
	b := []byte("RIFF\x00\x00\x00\x00WAVEfmt ")
	b = le.AppendUint32(b, fmtSize)
	b = append(b, 1, 0, 2, 0, 0x44, 0xac, 0, 0, 0x10, 0xb1, 2, 0, 4, 0, 16, 0)
	b = append(b, "LIST"...)
	b = le.AppendUint32(b, listSize)
	b = append(b, "data\x10\x00\x00\x00"...)
	return append(b, make([]byte, 16)...)
}

func wavAlign(align uint16) []byte {
	b := wavWith(16, 0)
	binary.LittleEndian.PutUint16(b[32:], align)
	return b
}

// oggComments sets the comment count after the vendor string of the packet
// that starts with prefix, and makes the page checksums right again.
func oggComments(b []byte, prefix string, count uint32) []byte {
	b = bytes.Clone(b)
	i := bytes.Index(b, []byte(prefix)) + len(prefix)
	vendor := int(binary.LittleEndian.Uint32(b[i:]))
	binary.LittleEndian.PutUint32(b[i+4+vendor:], count)
	fixCRC(b)
	return b
}

// oggPicture sets the data length of the picture embedded in an Ogg
// file's comments (base64 of a FLAC picture block) to nearly 4 GB.
func oggPicture(b []byte) []byte {
	b = bytes.Clone(b)
	key := []byte("METADATA_BLOCK_PICTURE=")
	k := bytes.Index(b, key)
	n := int(binary.LittleEndian.Uint32(b[k-4:])) - len(key)
	field := b[k+len(key) : k+len(key)+n]
	pic, err := base64.StdEncoding.DecodeString(string(field))
	if err != nil {
		panic(err)
	}
	r := 4
	for range 2 { // MIME type, description
		r += 4 + int(binary.BigEndian.Uint32(pic[r:]))
	}
	binary.BigEndian.PutUint32(pic[r+16:], 0xfffffff0)
	copy(field, base64.StdEncoding.EncodeToString(pic))
	fixCRC(b)
	return b
}

func fixCRC(b []byte) {
	var table [256]uint32
	for i := range table {
		r := uint32(i) << 24
		for range 8 {
			if r&0x80000000 != 0 {
				r = r<<1 ^ 0x04c11db7
			} else {
				r <<= 1
			}
		}
		table[i] = r
	}
	for off := 0; off+27 <= len(b) && string(b[off:off+4]) == "OggS"; {
		n := 27 + int(b[off+26])
		for _, s := range b[off+27 : off+n] {
			n += int(s)
		}
		page := b[off : off+n]
		clear(page[22:26])
		var crc uint32
		for _, c := range page {
			crc = crc<<8 ^ table[byte(crc>>24)^c]
		}
		binary.LittleEndian.PutUint32(page[22:], crc)
		off += n
	}
}
