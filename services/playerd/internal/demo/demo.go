// Package demo synthesizes the demo library: traditional children's songs
// on a music box, written as WAV files with a cover per folder.
package demo

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// Rate is deliberately not the player's 48 kHz, so the demo exercises the
// resampler as real CD-rate files do.
const Rate = 22050

type song struct {
	file   string
	tempo  float64 // beats per minute
	melody string  // "C4:1 D4:1 …" note:beats, "R" is a rest
}

type folder struct {
	path  string
	color color.RGBA
	voice func(freq, t, dur float64) float64
	slow  float64 // tempo factor
	songs []song
}

var songs = []song{
	{"01 Alle meine Entchen", 120, "C4:1 D4:1 E4:1 F4:1 G4:2 G4:2 A4:1 A4:1 A4:1 A4:1 G4:4 A4:1 A4:1 A4:1 A4:1 G4:4 F4:1 F4:1 F4:1 F4:1 E4:2 E4:2 D4:1 D4:1 D4:1 D4:1 C4:4"},
	{"02 Haenschen klein", 120, "G4:1 E4:1 E4:2 F4:1 D4:1 D4:2 C4:1 D4:1 E4:1 F4:1 G4:1 G4:1 G4:2 G4:1 E4:1 E4:2 F4:1 D4:1 D4:2 C4:1 E4:1 G4:1 G4:1 C4:4"},
	{"03 Bruder Jakob", 110, "C4:1 D4:1 E4:1 C4:1 C4:1 D4:1 E4:1 C4:1 E4:1 F4:1 G4:2 E4:1 F4:1 G4:2 G4:0.5 A4:0.5 G4:0.5 F4:0.5 E4:1 C4:1 G4:0.5 A4:0.5 G4:0.5 F4:0.5 E4:1 C4:1 C4:1 G3:1 C4:2 C4:1 G3:1 C4:2"},
	{"04 Morgen kommt der Weihnachtsmann", 110, "C4:1 C4:1 G4:1 G4:1 A4:1 A4:1 G4:2 F4:1 F4:1 E4:1 E4:1 D4:1 D4:1 C4:2 G4:1 G4:1 F4:1 F4:1 E4:1 E4:1 D4:2 G4:1 G4:1 F4:1 F4:1 E4:1 E4:1 D4:2 C4:1 C4:1 G4:1 G4:1 A4:1 A4:1 G4:2 F4:1 F4:1 E4:1 E4:1 D4:1 D4:1 C4:2"},
}

var folders = []folder{
	{path: "Musik/Kinderlieder", color: color.RGBA{0xf2, 0x8c, 0x28, 0xff}, voice: pluck, slow: 1, songs: songs},
	{path: "Einschlafen/Spieluhr", color: color.RGBA{0x3a, 0x4f, 0x9a, 0xff}, voice: musicBox, slow: 0.7, songs: songs},
}

// Write creates the demo library under dir.
func Write(dir string) error {
	for _, f := range folders {
		fdir := filepath.Join(dir, filepath.FromSlash(f.path))
		if err := os.MkdirAll(fdir, 0o755); err != nil {
			return err
		}
		for _, s := range f.songs {
			pcm, err := render(s, f.voice, f.slow)
			if err != nil {
				return fmt.Errorf("%s: %w", s.file, err)
			}
			if err := writeWAV(filepath.Join(fdir, s.file+".wav"), pcm); err != nil {
				return err
			}
		}
		if err := writeCover(filepath.Join(fdir, "cover.png"), f.color); err != nil {
			return err
		}
	}
	return nil
}

var semitone = map[byte]int{'C': -9, 'D': -7, 'E': -5, 'F': -4, 'G': -2, 'A': 0, 'B': 2}

// frequency of a note name such as "A4" (440 Hz) or "F#3".
func frequency(note string) (float64, error) {
	if len(note) < 2 {
		return 0, fmt.Errorf("bad note %q", note)
	}
	n, ok := semitone[note[0]]
	if !ok {
		return 0, fmt.Errorf("bad note %q", note)
	}
	rest := note[1:]
	if rest[0] == '#' {
		n++
		rest = rest[1:]
	}
	var octave int
	if _, err := fmt.Sscanf(rest, "%d", &octave); err != nil {
		return 0, fmt.Errorf("bad note %q", note)
	}
	return 440 * math.Pow(2, float64(n+12*(octave-4))/12), nil
}

func render(s song, voice func(freq, t, dur float64) float64, slow float64) ([]int16, error) {
	beat := 60 / (s.tempo * slow)
	var out []float64
	tail := int(1.5 * Rate) // let the last note ring out
	for _, tok := range strings.Fields(s.melody) {
		name, beats, ok := strings.Cut(tok, ":")
		var b float64
		if _, err := fmt.Sscanf(beats, "%g", &b); !ok || err != nil {
			return nil, fmt.Errorf("bad token %q", tok)
		}
		dur := b * beat
		start := len(out)
		out = append(out, make([]float64, int(dur*Rate))...)
		if name == "R" {
			continue
		}
		freq, err := frequency(name)
		if err != nil {
			return nil, err
		}
		// Each note rings on under the next ones, as on a real music box.
		ring := int(min(dur+1.2, 3) * Rate)
		if need := start + ring; need > len(out) {
			out = append(out, make([]float64, need-len(out))...)
		}
		for i := range ring {
			out[start+i] += voice(freq, float64(i)/Rate, dur)
		}
	}
	out = append(out, make([]float64, tail)...)
	pcm := make([]int16, len(out))
	for i, v := range out {
		pcm[i] = int16(math.Max(-1, math.Min(1, v*0.5)) * 32767)
	}
	return pcm, nil
}

// pluck is a bright plucked string: harmonics that decay faster than the
// fundamental.
func pluck(f, t, _ float64) float64 {
	attack := math.Min(1, t/0.004)
	v := 0.0
	for h := 1.0; h <= 5; h++ {
		v += math.Sin(2*math.Pi*f*h*t) * math.Exp(-t*(2.5+1.5*h)) / h
	}
	return 0.5 * attack * v
}

// musicBox is a soft metal comb: a fundamental with an inharmonic overtone.
func musicBox(f, t, _ float64) float64 {
	attack := math.Min(1, t/0.002)
	v := math.Sin(2*math.Pi*f*t)*math.Exp(-t*1.8) + 0.3*math.Sin(2*math.Pi*f*3.9*t)*math.Exp(-t*6)
	return 0.45 * attack * v
}

func writeWAV(path string, pcm []int16) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	data := uint32(len(pcm) * 2)
	hdr := []any{[4]byte{'R', 'I', 'F', 'F'}, 36 + data, [4]byte{'W', 'A', 'V', 'E'}, [4]byte{'f', 'm', 't', ' '},
		uint32(16), uint16(1), uint16(1), uint32(Rate), uint32(Rate * 2), uint16(2), uint16(16), [4]byte{'d', 'a', 't', 'a'}, data}
	for _, v := range hdr {
		if err := binary.Write(w, binary.LittleEndian, v); err != nil {
			f.Close()
			return err
		}
	}
	if err := binary.Write(w, binary.LittleEndian, pcm); err != nil {
		f.Close()
		return err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeCover draws a simple cover: the folder's colour with a few notes.
func writeCover(path string, c color.RGBA) error {
	const size = 300
	img := image.NewRGBA(image.Rect(0, 0, size, size))
	light := color.RGBA{255, 255, 255, 255}
	for y := range size {
		for x := range size {
			img.Set(x, y, c)
		}
	}
	for i, n := range []struct{ x, y int }{{70, 190}, {140, 160}, {210, 200}} {
		_ = i
		for y := -22; y <= 22; y++ {
			for x := -28; x <= 28; x++ {
				if x*x*22*22+y*y*28*28 <= 22*22*28*28 {
					img.Set(n.x+x, n.y+y, light)
				}
			}
		}
		for y := n.y - 120; y <= n.y; y++ {
			for x := n.x + 20; x <= n.x+28; x++ {
				img.Set(x, y, light)
			}
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
