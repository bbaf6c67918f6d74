package player

import (
	"context"
	"math"
	"slices"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/loudness"
	"github.com/storybox/storybox/services/playerd/internal/output"
)

// Modes of loudness normalisation (the setting audio.normalize).
const (
	// NormalizeFolder: one gain for a whole folder, from the folder's
	// loudness, so an audio play keeps its own dynamics and its gapless
	// joins stay sample-exact.
	NormalizeFolder = "folder"
	// NormalizeTrack: each track brought to the target on its own.
	NormalizeTrack = "track"
	// NormalizeOff plays the files as they are.
	NormalizeOff = "off"
)

// NormalizeModes are the valid values of the setting, the default first.
var NormalizeModes = []string{NormalizeFolder, NormalizeTrack, NormalizeOff}

const (
	// TargetLUFS is the integrated loudness everything plays at, at full
	// volume: ReplayGain 2.0's reference level. It leaves a loud master
	// 12 dB of headroom to come down and a quiet audio play room to come
	// up without its peaks touching the ceiling.
	TargetLUFS = -18.0
	// CeilingDBTP is the highest true peak normalisation may produce: a
	// gain is bounded so that the measured true peak stays below it.
	CeilingDBTP = -1.0
	// UnmeasuredLUFS is the loudness assumed of what has not been measured
	// yet: as loud as the loudest masters made for sale (brick-walled pop
	// reaches about −5 LUFS). An unmeasured track so plays no louder than
	// it would once measured; it plays quieter until then.
	UnmeasuredLUFS = -5.0
	// maxBoostDB bounds the gain of very quiet material, whose noise
	// would otherwise be raised as far as its peaks allow.
	maxBoostDB = 24.0
	monoDB     = 3.0103 // 10·log10(2)
)

// Level is a measured loudness (BS.1770 / EBU R128).
type Level struct {
	// Integrated loudness in LUFS; NaN or -Inf where no block passed the
	// gates (silence, or shorter than a 400 ms block).
	Integrated float64
	// TruePeak in dBTP (4× oversampled); -Inf for digital silence.
	TruePeak float64
}

// Levels finds what the background measurement found (the loudness
// package, through the box). Both are looked up in the player goroutine
// when a track opens, so they must not block.
type Levels interface {
	Track(t library.Track) (Level, bool)
	// Folder is the loudness gated over all blocks of all of the folder's
	// tracks; false until every track is measured.
	Folder(f library.Folder) (Level, bool)
}

// How the gain of what plays was chosen (Normalization.By).
const (
	ByFolder     = "folder"     // the folder's measured loudness
	ByTrack      = "track"      // the track's measured loudness
	ByUnmeasured = "unmeasured" // not measured yet: the conservative gain
	ByLeveller   = "leveller"   // a station or a streamed episode
	ByOff        = "off"
)

// Normalization is the gain normalisation applies to what plays, in the
// status.
type Normalization struct {
	Mode string `json:"mode"`
	By   string `json:"by"`
	// GainDB is the gain in dB on top of the volume; a leveller's to
	// the whole dB (it moves slowly and continuously).
	GainDB float64 `json:"gain_db"`
	// LUFS is the measured integrated loudness it was derived from; null
	// when not measured, for streams, and for silence.
	LUFS *float64 `json:"lufs"`
}

// GainFor is the gain in dB that brings a measured level to the target:
// bounded so that the true peak stays at or under the ceiling (a bounded
// gain rather than a limiter: it keeps the master's dynamics and adds no
// distortion; a quiet master with loud peaks plays below the target) and
// so that silence is not raised. A level without a gated block (silence,
// a file under 400 ms) gets the unmeasured gain, bounded by its peak.
func GainFor(l Level) float64 {
	g := TargetLUFS - UnmeasuredLUFS
	if !math.IsNaN(l.Integrated) && !math.IsInf(l.Integrated, 0) {
		g = min(TargetLUFS-l.Integrated, maxBoostDB)
	}
	if !math.IsNaN(l.TruePeak) && !math.IsInf(l.TruePeak, -1) {
		g = min(g, CeilingDBTP-l.TruePeak)
	}
	return g
}

// OutputLUFS is the loudest integrated loudness at the output, relative to
// digital full scale, of anything normalised playing at volume: the
// target, lowered by the volume curve's gain.
func OutputLUFS(volume int) float64 {
	if volume <= 0 {
		return math.Inf(-1)
	}
	return TargetLUFS + volumeDB(volume)
}

func dbToGain(db float64) float64 { return math.Pow(10, db/20) }

// Choose is the normalisation of file t of folder f in mode, from what
// levels (nil: nothing) has measured. In the folder mode a folder not yet
// measured whole plays each measured track at its own gain meanwhile. mono
// is a file of one channel: BS.1770 counts its one channel, the box plays
// it on both sides, 3 dB louder than it measured.
func Choose(mode string, levels Levels, f library.Folder, t library.Track, mono bool) Normalization {
	n := Normalization{Mode: mode, By: ByOff}
	if mode == NormalizeOff || !slices.Contains(NormalizeModes, mode) {
		n.Mode = NormalizeOff
		return n
	}
	var l Level
	ok := false
	loudest := math.Inf(-1) // the folder's loudest track, in the folder mode
	if levels != nil {
		if mode == NormalizeFolder {
			if l, ok = levels.Folder(f); ok {
				n.By = ByFolder
				for _, t := range f.Tracks {
					if tl, ok := levels.Track(t); ok && finite(tl.Integrated) {
						loudest = max(loudest, tl.Integrated)
					}
				}
			}
		}
		if !ok {
			l, ok = levels.Track(t)
			n.By = ByTrack
		}
	}
	if !ok {
		n.By = ByUnmeasured
		n.GainDB = GainFor(Level{Integrated: math.NaN(), TruePeak: math.NaN()})
		return n
	}
	if finite(l.Integrated) {
		lufs := l.Integrated
		n.LUFS = &lufs
	}
	// One gain for the folder, and its loudest track at the target, not
	// above it: the cap means a loudness for every track, and the tracks
	// keep their differences (an album is quieter than the target by
	// what its loudest track stands out).
	l.Integrated = max(l.Integrated, loudest)
	if mono && finite(l.Integrated) {
		l.Integrated += monoDB
	}
	n.GainDB = GainFor(l)
	return n
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// normalizeTrack chooses the normalisation of the track just opened at
// queue index i.
func (p *Player) normalizeTrack(t *track, i int) {
	mode := p.normalizeMode()
	t.lev = nil
	var n Normalization
	switch {
	case t.remote != nil && mode != NormalizeOff:
		n = Normalization{Mode: mode, By: ByLeveller}
		t.lev = newLeveller(t.rate)
	case p.folder == nil:
		n = Normalization{Mode: NormalizeOff, By: ByOff}
	default:
		n = Choose(mode, p.cfg.Levels, *p.folder, p.trackAt(i), t.format.NumChannels == 1)
	}
	t.norm = n
	t.normGain = dbToGain(n.GainDB)
}

func (p *Player) normalizeMode() string {
	if slices.Contains(NormalizeModes, p.cfg.Normalize) {
		return p.cfg.Normalize
	}
	return NormalizeOff
}

// clipMeasured bounds what of an announcement is measured before it
// starts: the meter costs about 5.5 ms of this machine's CPU per second of
// audio (most of it the true peak), 30 to 55 ms on a Pi Zero 2 W (a fifth
// to a tenth of this machine, docs/performance.md), which a long message
// would otherwise add to its start. Speech keeps its level over a message; the rest's
// sample peaks still bound the gain.
const clipMeasured = 3 * output.ClipRate

// clipLevel measures an announcement (speech, a chime, a tone). A clip too
// short for a gating block (a chime under 400 ms) is taken at its loudness
// as a whole rather than at the unmeasured gain: it is ours, and known.
func clipLevel(pcm [][2]float64) Level {
	m := newMeter(output.ClipRate)
	head := pcm[:min(len(pcm), clipMeasured)]
	m.Write(head)
	l := m.Integrated()
	if m.Seconds() < 0.4 {
		l = m.Momentary()
	}
	if l <= loudness.AbsoluteGate {
		l = math.NaN()
	}
	var rest float64
	for _, f := range pcm[len(head):] {
		rest = max(rest, math.Abs(f[0]), math.Abs(f[1]))
	}
	return Level{Integrated: l, TruePeak: max(m.TruePeak(), 20*math.Log10(rest))}
}

// clipGain is the gain an announcement plays at: its volume's, and like
// music brought to the target, so announcement_volume means the same
// loudness for a chime as for speech.
func (p *Player) clipGain(c *clip) float64 {
	g := gainFor(p.clampVolume(p.cfg.AnnounceVolume))
	if p.normalizeMode() != NormalizeOff {
		g *= dbToGain(GainFor(c.level))
	}
	return g
}

// musicGain is the gain the music plays at: the volume's and
// normalisation's.
func (p *Player) musicGain() float64 {
	g := gainFor(p.volume)
	switch {
	case p.cur == nil:
	case p.cur.lev != nil:
		g *= dbToGain(p.cur.lev.gainDB)
	default:
		g *= p.cur.normGain
	}
	return g
}

// normalization is the status's, built anew only when it changed: a
// leveller's is looked at every period.
func (p *Player) normalization() *Normalization {
	n := p.cur.norm
	if p.cur.lev != nil {
		n.GainDB = math.Round(p.cur.lev.gainDB)
	}
	if p.normSnap == nil || !sameNormalization(p.normSnap, &n) {
		p.normSnap = &n
	}
	return p.normSnap
}

// SetNormalize changes the mode of normalisation (one of NormalizeModes); a
// track playing moves to its new gain within a period.
func (p *Player) SetNormalize(ctx context.Context, mode string) (Status, error) {
	if !slices.Contains(NormalizeModes, mode) {
		return Status{}, invalid("normalize must be one of %v, not %q", NormalizeModes, mode)
	}
	return p.send(ctx, request{change: func() error {
		if p.cfg.Normalize == mode {
			return nil
		}
		p.cfg.Normalize = mode
		if p.cur != nil {
			p.normalizeTrack(p.cur, p.index)
			p.dirty = true
			p.retake()
		}
		return nil
	}})
}

func sameNormalization(a, b *Normalization) bool {
	if a == nil || b == nil {
		return a == b
	}
	return a.Mode == b.Mode && a.By == b.By && a.GainDB == b.GainDB &&
		(a.LUFS == b.LUFS || a.LUFS != nil && b.LUFS != nil && *a.LUFS == *b.LUFS)
}
