package library

import "time"

// Kinds of folders: a directory of the media root, a radio station, a
// podcast's episodes.
const (
	KindLocal   = "local"
	KindRadio   = "radio"
	KindPodcast = "podcast"
)

// Providers of tracks, and where a track comes from.
const (
	ProviderLocal   = "local"
	ProviderRadio   = "radio" // live: no duration, never a resume point
	ProviderPodcast = "podcast"
)

// Resume policies: "position", the box remembers where listening stopped;
// "none", it does not (a live station).
const (
	ResumePosition = "position"
	ResumeNone     = "none"
)

// Track is one audio file of a folder, or a stream.
type Track struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Artist   string  `json:"artist,omitempty"`
	Album    string  `json:"album,omitempty"`
	Duration float64 `json:"duration"` // seconds; 0 when unknown (and for a station)
	Provider string  `json:"provider"`
	// ResumePolicy: ResumePosition or ResumeNone.
	ResumePolicy string `json:"resume_policy"`
	// Published is a podcast episode's publication date.
	Published *time.Time `json:"published,omitempty"`

	Path string `json:"-"` // absolute, inside the media root
	// URL is where a station or an episode streams from (Provider radio
	// or podcast); Path is empty then.
	URL string `json:"-"`
	rel string
	// Loudness is filled only where GET /api/library shows a file.
	Loudness *Loudness `json:"loudness,omitempty"`
}

// Loudness is a file's or a folder's measured loudness and the gain loudness
// normalisation gives it now, as GET /api/library shows them.
type Loudness struct {
	Measured bool `json:"measured"`
	// LUFS is the integrated loudness; null when not measured, for
	// silence and for a file under 400 ms (no gating block).
	LUFS         *float64 `json:"lufs"`
	TruePeakDBTP *float64 `json:"true_peak_dbtp"`
	RangeLU      *float64 `json:"range_lu"`
	// GainDB is the gain on top of the volume in the setting's mode; By
	// says how it was chosen (the status's normalize.by).
	GainDB float64 `json:"gain_db"`
	By     string  `json:"by"`
}

// Live reports a radio station: a stream without end or duration.
func (t Track) Live() bool { return t.Provider == ProviderRadio }

// Folder is a directory that directly holds audio files: an audio play, an
// album. Its ID is derived from its path relative to the media root, so it is
// stable across restarts and rescans.
type Folder struct {
	ID       string  `json:"id"`
	Kind     string  `json:"kind"` // KindLocal, KindRadio or KindPodcast
	Name     string  `json:"name"`
	Relative string  `json:"relative"`
	Cover    *string `json:"cover"` // "/api/cover/<id>", null when there is none
	Tracks   []Track `json:"tracks"`
	// Loudness is filled only where GET /api/library shows a folder of
	// files: the folder's loudness gated over all its tracks.
	Loudness *Loudness `json:"loudness,omitempty"`

	coverFile  string // cover.jpg and friends, absolute
	coverTrack string // a track with embedded art, absolute
}

// Duration is the sum of the track durations in seconds.
func (f *Folder) Duration() float64 {
	var d float64
	for _, t := range f.Tracks {
		d += t.Duration
	}
	return d
}
