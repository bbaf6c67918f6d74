package stream

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ICY (SHOUTcast/Icecast) metadata: a client that sends "Icy-MetaData: 1"
// gets "icy-metaint: N", and then after every N bytes of audio one length
// byte L and 16·L bytes of text such as "StreamTitle='Artist - Song';".

// maxMetaint bounds the audio between metadata blocks a server may announce;
// real servers use 8 to 64 KB.
const maxMetaint = 1 << 20

// maxTitle bounds a title in runes.
const maxTitle = 256

// parseMetaint reads the icy-metaint header: 0 when there is none.
func parseMetaint(v string) (int, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 1 || n > maxMetaint {
		return 0, fmt.Errorf("icy-metaint %q is not 1..%d", v, maxMetaint)
	}
	return n, nil
}

// icyReader passes the audio of an ICY stream on and takes the metadata
// blocks out. title is called for each StreamTitle with the number of audio
// bytes before it: the title belongs to the audio after them.
type icyReader struct {
	r       io.Reader
	metaint int
	left    int   // audio bytes until the next metadata block
	audio   int64 // audio bytes passed on
	meta    [255 * 16]byte
	title   func(at int64, title string)
}

func newICYReader(r io.Reader, metaint int, title func(at int64, title string)) *icyReader {
	return &icyReader{r: r, metaint: metaint, left: metaint, title: title}
}

func (ir *icyReader) Read(p []byte) (int, error) {
	if ir.left == 0 {
		var l [1]byte
		if _, err := io.ReadFull(ir.r, l[:]); err != nil {
			return 0, unexpected(err)
		}
		meta := ir.meta[:int(l[0])*16]
		if _, err := io.ReadFull(ir.r, meta); err != nil {
			return 0, unexpected(err)
		}
		if t, ok := streamTitle(meta); ok {
			ir.title(ir.audio, t)
		}
		ir.left = ir.metaint
	}
	n, err := ir.r.Read(p[:min(len(p), ir.left)])
	ir.left -= n
	ir.audio += int64(n)
	return n, err
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// streamTitle finds StreamTitle='…'; in a metadata block. ok is false when
// the block has none (the title stays as it was); an empty title is a title
// that ends.
func streamTitle(meta []byte) (string, bool) {
	meta = bytes.TrimRight(meta, "\x00")
	_, rest, ok := bytes.Cut(meta, []byte("StreamTitle='"))
	if !ok {
		return "", false
	}
	// The title ends at the "';" before the next field or at the block's
	// end; titles may contain quotes themselves.
	end := bytes.Index(rest, []byte("';"))
	if end < 0 {
		end = bytes.LastIndexByte(rest, '\'')
	}
	if end >= 0 {
		rest = rest[:end]
	}
	return cleanTitle(rest), true
}

// cleanTitle makes a title fit to show: UTF-8 (stations that send Latin-1
// are read as such), no control characters, trimmed, bounded.
func cleanTitle(b []byte) string {
	s := string(b)
	if !utf8.Valid(b) {
		r := make([]rune, len(b))
		for i, c := range b {
			r[i] = rune(c) // ISO 8859-1 maps bytes to the first 256 code points
		}
		s = string(r)
	}
	s = strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError:
			return -1
		case unicode.IsControl(r):
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > maxTitle {
		s = string([]rune(s)[:maxTitle-1]) + "…"
	}
	return s
}
