// Package state keeps what the box must remember across restarts and power
// cuts: the volume, the queue and its position, and where each folder was
// left. Files are replaced atomically, so a power cut leaves the old or the new
// version, never a torn one.
package state

import "time"

// Saved is the persistent player state.
type Saved struct {
	Volume int                    `json:"volume"`
	Queue  *Queue                 `json:"queue,omitempty"`
	Resume map[string]ResumePoint `json:"resume"` // by folder id
}

// Queue is the queue that was loaded when the state was saved.
type Queue struct {
	FolderID string  `json:"folder_id"`
	Index    int     `json:"index"`
	Position float64 `json:"position"` // seconds into the track
}

// ResumePoint is where listening stopped in one folder.
type ResumePoint struct {
	Index     int       `json:"index"`
	TrackID   string    `json:"track_id"`
	Position  float64   `json:"position"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Clone returns a deep copy, so the saver can write it while the player goes on.
func (s Saved) Clone() Saved {
	c := s
	if s.Queue != nil {
		q := *s.Queue
		c.Queue = &q
	}
	c.Resume = make(map[string]ResumePoint, len(s.Resume))
	for k, v := range s.Resume {
		c.Resume[k] = v
	}
	return c
}
