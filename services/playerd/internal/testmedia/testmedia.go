// Package testmedia writes small real audio files for tests.
package testmedia

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
)

// WAV builds a 16-bit stereo PCM WAV file from frames.
func WAV(rate int, frames [][2]int16) []byte {
	n := len(frames)
	buf := make([]byte, 44, 44+n*4)
	copy(buf, "RIFF")
	binary.LittleEndian.PutUint32(buf[4:], uint32(36+n*4))
	copy(buf[8:], "WAVEfmt ")
	binary.LittleEndian.PutUint32(buf[16:], 16)
	binary.LittleEndian.PutUint16(buf[20:], 1)
	binary.LittleEndian.PutUint16(buf[22:], 2)
	binary.LittleEndian.PutUint32(buf[24:], uint32(rate))
	binary.LittleEndian.PutUint32(buf[28:], uint32(rate*4))
	binary.LittleEndian.PutUint16(buf[32:], 4)
	binary.LittleEndian.PutUint16(buf[34:], 16)
	copy(buf[36:], "data")
	binary.LittleEndian.PutUint32(buf[40:], uint32(n*4))
	for _, f := range frames {
		buf = binary.LittleEndian.AppendUint16(buf, uint16(f[0]))
		buf = binary.LittleEndian.AppendUint16(buf, uint16(f[1]))
	}
	return buf
}

// Tone is a 16-bit stereo WAV of a sine tone at freq Hz.
func Tone(seconds float64, rate int, freq float64) []byte {
	frames := make([][2]int16, int(seconds*float64(rate)))
	for i := range frames {
		v := int16(8000 * math.Sin(2*math.Pi*freq*float64(i)/float64(rate)))
		frames[i] = [2]int16{v, v}
	}
	return WAV(rate, frames)
}

// WriteTone writes Tone to path, making its directory.
func WriteTone(path string, seconds float64, rate int, freq float64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, Tone(seconds, rate, freq), 0o644)
}

// Library writes folders of tones under root: each key is a relative folder
// path, each value the track lengths in seconds.
func Library(root string, folders map[string][]float64) error {
	for dir, lengths := range folders {
		for i, s := range lengths {
			name := filepath.Join(root, dir, "Folge "+itoa(i+1)+".wav")
			if err := WriteTone(name, s, 44100, 220*float64(i+1)); err != nil {
				return err
			}
		}
	}
	return nil
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}
