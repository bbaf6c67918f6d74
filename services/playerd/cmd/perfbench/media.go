package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

func makeMedia(media string, seconds int) error {
	wav := filepath.Join(media, "src.wav")
	if err := os.MkdirAll(media, 0o755); err != nil {
		return err
	}
	// Music-like: two voices and some noise, so the encoders do real work.
	if err := sh("sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", strconv.Itoa(seconds),
		"sine", "220-880", "sine", "330-660", "pinknoise", "remix", "1,2,3", "1,2,3", "gain", "-10"); err != nil {
		return err
	}
	for _, f := range formats {
		d := filepath.Join(media, f)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		out := filepath.Join(d, "01 track."+f)
		var err error
		switch f {
		case "mp3":
			err = sh("lame", "--quiet", "-b", "128", "--tt", "Track", "--ta", "Artist", wav, out)
		case "flac":
			err = sh("flac", "--silent", "-o", out, wav)
		case "ogg":
			err = sh("oggenc", "--quiet", "-q", "4", "-t", "Track", "-o", out, wav)
		case "m4a":
			err = sh("ffmpeg", "-loglevel", "error", "-nostdin", "-y", "-i", wav, "-c:a", "aac", "-b:a", "128k", "-metadata", "title=Track", out)
		}
		if err != nil {
			return err
		}
	}
	return os.Remove(wav)
}

func sh(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}

// libraryTrackSeconds is the length of every track of the scan library:
// long enough that a scanner walking every MP3 frame pays for it.
const libraryTrackSeconds = 30

// makeLibrary makes, once, a library of n tracks in albums of 20: 80 % MP3
// (128k CBR, LAME "Info" header, an ID3v2.3 tag with title, artist, album
// and track number) and 20 % FLAC (Vorbis comments). One MP3 and one FLAC are
// encoded; the rest are copies with their own tags, so each file is a
// distinct, correctly tagged track. A marker file says the library is whole.
func makeLibrary(dir string, n int) error {
	marker := filepath.Join(dir, ".complete")
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	fmt.Printf("making a library of %d tracks in %s (once)\n", n, dir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	src := filepath.Join(dir, ".src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return err
	}
	wav := filepath.Join(src, "src.wav")
	if err := sh("sox", "-n", "-r", "44100", "-c", "2", "-b", "16", wav, "synth", strconv.Itoa(libraryTrackSeconds),
		"sine", "220-880", "sine", "330-660", "remix", "1,2", "1,2", "gain", "-10"); err != nil {
		return err
	}
	mp3 := filepath.Join(src, "src.mp3")
	if err := sh("lame", "--quiet", "-b", "128", "--cbr", wav, mp3); err != nil {
		return err
	}
	frames, err := os.ReadFile(mp3)
	if err != nil {
		return err
	}
	flac := filepath.Join(src, "src.flac")
	if err := sh("flac", "--silent", "-o", flac, wav); err != nil {
		return err
	}
	flacData, err := os.ReadFile(flac)
	if err != nil {
		return err
	}
	nMP3 := n * 8 / 10
	for i := range n {
		album, track := i/20, i%20+1
		var name string
		if i < nMP3 {
			name = fmt.Sprintf("mp3 album %04d/%02d track.mp3", album, track)
		} else {
			name = fmt.Sprintf("flac album %04d/%02d track.flac", album, track)
		}
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		title, albumName := fmt.Sprintf("Track %d of album %d", track, album), fmt.Sprintf("Album %d", album)
		if i < nMP3 {
			data := append(id3v2(map[string]string{"TIT2": title, "TPE1": "Artist", "TALB": albumName, "TRCK": strconv.Itoa(track)}), frames...)
			if err := os.WriteFile(path, data, 0o644); err != nil {
				return err
			}
			continue
		}
		if err := os.WriteFile(path, flacData, 0o644); err != nil {
			return err
		}
		if err := sh("metaflac", "--remove-all-tags", "--set-tag=TITLE="+title, "--set-tag=ARTIST=Artist",
			"--set-tag=ALBUM="+albumName, "--set-tag=TRACKNUMBER="+strconv.Itoa(track), path); err != nil {
			return err
		}
	}
	if err := os.RemoveAll(src); err != nil {
		return err
	}
	return os.WriteFile(marker, nil, 0o644)
}

// id3v2 is an ID3v2.3 tag of text frames (ISO-8859-1), with some padding as
// taggers leave it.
func id3v2(frames map[string]string) []byte {
	var body []byte
	for _, id := range []string{"TIT2", "TPE1", "TALB", "TRCK"} {
		v, ok := frames[id]
		if !ok {
			continue
		}
		size := len(v) + 1
		body = append(body, id...)
		body = append(body, byte(size>>24), byte(size>>16), byte(size>>8), byte(size), 0, 0, 0)
		body = append(body, v...)
	}
	body = append(body, make([]byte, 256)...)
	size := len(body) // synchsafe
	head := []byte{'I', 'D', '3', 3, 0, 0, byte(size >> 21 & 0x7f), byte(size >> 14 & 0x7f), byte(size >> 7 & 0x7f), byte(size & 0x7f)}
	return append(head, body...)
}

// warmCache reads every file under dir once, so that the first program to
// scan the library does not pay for the disk and the others only for the
// page cache: the scan figures then compare the programs, not their order.
func warmCache(dir string) error {
	buf := make([]byte, 1<<20)
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyBuffer(io.Discard, f, buf)
		return err
	})
}
