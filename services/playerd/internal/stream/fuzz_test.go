package stream

import (
	"bytes"
	"io"
	"net/url"
	"testing"
	"unicode/utf8"
)

// The ICY demuxer and the playlist parser read what any server sends. An
// error is a fine answer; a panic, an unbounded allocation, a title that is
// not valid UTF-8 or too long, or audio bytes invented or lost are not.
// `make fuzz` runs these with the decoder targets.

func FuzzICY(f *testing.F) {
	f.Add(byte(16), []byte("0123456789abcdef\x02StreamTitle='A - B';\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00audio after"))
	f.Add(byte(4), []byte("abcd\x00efgh\xffStreamTitle='lies about its length"))
	f.Add(byte(1), []byte("a\x01StreamTitle='\xe4\xf6\xfc';\x00b"))
	f.Fuzz(func(t *testing.T, metaint byte, data []byte) {
		m := int(metaint)%64 + 1
		var titles int
		r := newICYReader(bytes.NewReader(data), m, func(at int64, title string) {
			titles++
			if !utf8.ValidString(title) || utf8.RuneCountInString(title) > maxTitle {
				t.Errorf("title %q", title)
			}
			if at < 0 || at > int64(len(data)) {
				t.Errorf("title at audio byte %d of %d", at, len(data))
			}
		})
		audio, err := io.ReadAll(r)
		if err == nil && len(audio) > len(data) {
			t.Errorf("%d audio bytes from %d", len(audio), len(data))
		}
		// Every audio byte passed on is a byte of data, in order.
		if int64(len(audio)) != r.audio {
			t.Errorf("counted %d audio bytes, passed %d", r.audio, len(audio))
		}
	})
}

func FuzzStreamTitle(f *testing.F) {
	f.Add([]byte("StreamTitle='Rolf Zuckowski - Winterkinder';StreamUrl='';"))
	f.Add([]byte("StreamTitle='It''s a title with 'quotes'';"))
	f.Add([]byte("StreamTitle='\xc4\xd6\xdc Latin-1';\x00\x00"))
	f.Fuzz(func(t *testing.T, meta []byte) {
		title, _ := streamTitle(meta)
		if !utf8.ValidString(title) || utf8.RuneCountInString(title) > maxTitle {
			t.Errorf("title %q", title)
		}
	})
}

func FuzzPlaylist(f *testing.F) {
	f.Add("m3u", []byte("#EXTM3U\n#EXTINF:-1,Radio\nhttp://radio.example/live.mp3\n"))
	f.Add("pls", []byte("[playlist]\nFile1=http://radio.example/a\nFile2=b.mp3\nNumberOfEntries=2\n"))
	f.Add("m3u", []byte("#EXTM3U\n#EXT-X-VERSION:3\nseg.ts\n"))
	f.Add("m3u", []byte("\ufeff../up\nfile:///etc/passwd\n//other.example/x\n"))
	base, _ := url.Parse("http://radio.example/dir/list.m3u")
	f.Fuzz(func(t *testing.T, kind string, data []byte) {
		if len(data) > maxPlaylist {
			return
		}
		_ = playlistKind(kind, base, data)
		urls, err := parsePlaylist(kind, data, base)
		if err == nil && (len(urls) == 0 || len(urls) > maxPlaylistItems) {
			t.Errorf("%d entries without an error", len(urls))
		}
		for _, u := range urls {
			if u.Scheme != "http" && u.Scheme != "https" {
				t.Errorf("entry %q", u)
			}
		}
	})
}

func TestStreamTitle(t *testing.T) {
	for _, tc := range []struct {
		meta, title string
		ok          bool
	}{
		{"StreamTitle='Rolf Zuckowski - Winterkinder';StreamUrl='';\x00\x00", "Rolf Zuckowski - Winterkinder", true},
		{"StreamTitle='Pippi's Lied';", "Pippi's Lied", true},
		{"StreamTitle='M\xe4rchen f\xfcr Kinder';", "Märchen für Kinder", true}, // Latin-1
		{"StreamTitle='M\xc3\xa4rchen';", "Märchen", true},
		{"StreamTitle='';", "", true},
		{"StreamTitle='  two\t\nlines  ';", "two lines", true},
		{"StreamUrl='http://x';", "", false},
		{"StreamTitle='no end", "no end", true},
	} {
		title, ok := streamTitle([]byte(tc.meta))
		if title != tc.title || ok != tc.ok {
			t.Errorf("%q: %q %v, want %q %v", tc.meta, title, ok, tc.title, tc.ok)
		}
	}
	long := "StreamTitle='" + string(bytes.Repeat([]byte("x"), 1000)) + "';"
	if title, _ := streamTitle([]byte(long)); utf8.RuneCountInString(title) != maxTitle {
		t.Errorf("a long title is %d runes", utf8.RuneCountInString(title))
	}
}

func TestParsePlaylist(t *testing.T) {
	base, _ := url.Parse("http://radio.example/lists/kids.pls")
	urls, err := parsePlaylist("pls", []byte("[playlist]\nfile1=http://a.example/live\nFile2=relative.mp3\nFile3=ftp://x/y\n"), base)
	if err != nil || len(urls) != 2 || urls[0].String() != "http://a.example/live" || urls[1].String() != "http://radio.example/lists/relative.mp3" {
		t.Errorf("%v %v", urls, err)
	}
	if _, err := parsePlaylist("m3u", []byte("#EXTM3U\n#EXT-X-TARGETDURATION:6\n"), base); err != ErrHLS {
		t.Errorf("HLS: %v", err)
	}
	if _, err := parsePlaylist("m3u", []byte("# only comments\n"), base); err == nil {
		t.Error("an empty playlist")
	}
}
