package loudness

import (
	"fmt"

	"github.com/gopxl/beep/v2"
)

// MinPeak is the true peak reported for digital silence, in dBTP: finite, so
// a result can be stored as JSON and a gain computed from it.
const MinPeak = -120.0

// Result is a track's (or, from Combine, a folder's) loudness.
type Result struct {
	// Integrated loudness in LUFS; AbsoluteGate (−70) when no 400 ms block
	// passes the gates: silence, or a file shorter than 400 ms. Silent tells
	// those apart from a quiet track.
	Integrated float64 `json:"integrated"`
	Range      float64 `json:"range"`     // loudness range, LU
	TruePeak   float64 `json:"true_peak"` // dBTP, at least MinPeak
	Duration   float64 `json:"duration"`  // seconds measured
	// Histogram holds the 400 ms blocks' loudness, ShortTerm the 3 s
	// windows', both from the absolute gate up: what Combine gates a folder
	// over.
	Histogram Histogram `json:"blocks"`
	ShortTerm Histogram `json:"short_term"`
}

// Silent reports a result without a block above the absolute gate, whose
// Integrated is no loudness but the gate.
func (r Result) Silent() bool { return r.Histogram.Count() == 0 }

// Combine is the loudness of rs played one after another as one programme
// (a folder): integrated loudness and range gated over all their blocks
// and windows, from the histograms alone (to ±0.05 LU, see Histogram); the
// highest true peak; the total duration. Blocks that would span two tracks
// are not counted, which at 10 blocks a second is immaterial.
func Combine(rs ...Result) Result {
	var blocks, short Histogram
	out := Result{TruePeak: MinPeak}
	for _, r := range rs {
		blocks.Merge(r.Histogram)
		short.Merge(r.ShortTerm)
		out.TruePeak = max(out.TruePeak, r.TruePeak)
		out.Duration += r.Duration
	}
	out.Histogram, out.ShortTerm = blocks, short
	out.Integrated = integrated(blocks.dense(), nil)
	out.Range = loudnessRange(short.dense())
	return out
}

// Measure reads s (of format f) to its end and measures it. Files with
// more than two channels reach us downmixed or as their first pair (the
// decoders' choice), so the meter counts at most two. pace, when not nil,
// is called before every chunk of about 100 ms of audio: it may wait (to
// yield to playing) and its error stops the measurement.
func Measure(s beep.Streamer, f beep.Format, pace func() error) (Result, error) {
	m, err := NewMeter(int(f.SampleRate), min(max(f.NumChannels, 1), 2))
	if err != nil {
		return Result{}, err
	}
	buf := make([][2]float64, max(int(f.SampleRate)/10, 64))
	for {
		if pace != nil {
			if err := pace(); err != nil {
				return Result{}, err
			}
		}
		n, ok := s.Stream(buf)
		m.Write(buf[:n])
		if !ok {
			break
		}
	}
	if err := s.Err(); err != nil {
		return Result{}, fmt.Errorf("loudness: %w", err)
	}
	return m.Result(), nil
}

// Lookup is what playing asks of the measured library. Both calls answer
// at once from memory, never waiting for a measurement, so the player may
// call them on its start path; ok is false for what is not measured (yet).
type Lookup interface {
	// Track is the result of the file at path (absolute, as
	// library.Track.Path; a chapter path gives its file's result).
	Track(path string) (Result, bool)
	// Folder is a folder's result by its library id: Combine over its
	// tracks, ok only once every track of it is measured.
	Folder(id string) (Result, bool)
}
