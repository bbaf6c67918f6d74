package library

// Track is one audio file of a folder.
type Track struct {
	ID       string  `json:"id"`
	Title    string  `json:"title"`
	Artist   string  `json:"artist,omitempty"`
	Album    string  `json:"album,omitempty"`
	Duration float64 `json:"duration"` // seconds; 0 when unknown
	Provider string  `json:"provider"`
	// ResumePolicy "position": the box remembers where listening stopped.
	ResumePolicy string `json:"resume_policy"`

	Path string `json:"-"` // absolute, inside the media root
	rel  string
}

// Folder is a directory that directly holds audio files: an audio play, an
// album. Its ID is derived from its path relative to the media root, so it is
// stable across restarts and rescans.
type Folder struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Relative string  `json:"relative"`
	Cover    *string `json:"cover"` // "/api/cover/<id>", null when there is none
	Tracks   []Track `json:"tracks"`

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
