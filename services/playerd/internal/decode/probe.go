package decode

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Probe is what a look into an audio file found.
type Probe struct {
	Format   string  // flac, oggflac, wav, vorbis, opus, mp3, aac (ADTS) or mp4
	Ext      string  // the extension files of this format take: .flac, .oga, .wav, .ogg, .opus, .mp3, .aac, .m4a
	Duration float64 // seconds
}

var formatExt = map[string]string{"flac": ".flac", "oggflac": ".oga", "wav": ".wav", "vorbis": ".ogg", "opus": ".opus", "mp3": ".mp3", "aac": ".aac", "mp4": ".m4a"}

// probeFrames is how much is decoded to believe a file plays: a second.
const probeFrames = 48000

// ProbeFile tells whether f is audio the box can play, for content that
// arrives over the network (an upload): it is opened and its first second
// decoded behind the boundary, as the player would. Errors are
// ErrUnsupported, ErrCorrupt or ErrBudget (wrapped). ProbeFile closes f.
func ProbeFile(f *os.File) (Probe, error) {
	src, err := sourceOf(f)
	if err != nil {
		return Probe{}, fmt.Errorf("decode: %w", err)
	}
	var head [64]byte
	src.budget(openBudget(src.size))
	n, err := src.ReadAt(head[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		src.Close()
		return Probe{}, fmt.Errorf("decode: %w", err)
	}
	kind := sniff(head[:n])
	if kind == "mp3" && adtsAfterID3(src) {
		kind = "aac"
	}
	if kind == "" {
		src.Close()
		return Probe{}, ErrUnsupported
	}
	g, format, err := open(src)
	if err != nil {
		src.Close()
		return Probe{}, fmt.Errorf("decode: %w", err)
	}
	defer g.Close()
	if g.Len() == 0 {
		return Probe{}, fmt.Errorf("decode: %w: no audio in the file", ErrCorrupt)
	}
	buf := make([][2]float64, 4096)
	for got := 0; got < min(probeFrames, g.Len()); {
		k, ok := g.Stream(buf)
		got += k
		if !ok || k == 0 {
			break
		}
	}
	if err := g.Err(); err != nil {
		return Probe{}, fmt.Errorf("decode: %w", err)
	}
	return Probe{Format: kind, Ext: formatExt[kind], Duration: float64(g.Len()) / float64(format.SampleRate)}, nil
}
