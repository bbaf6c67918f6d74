// Package state keeps what the box must remember across restarts and power
// cuts: the volume, the queue and its position, and where each folder was
// left. Files are replaced atomically, so a power cut leaves the old or the new
// version, never a torn one.
package state

import (
	"slices"
	"time"
)

// Saved is the persistent player state.
type Saved struct {
	Volume int                    `json:"volume"`
	Queue  *Queue                 `json:"queue,omitempty"`
	Resume map[string]ResumePoint `json:"resume"` // by folder id
	// Listening is the parental rules' daily counter; it travels with the
	// player state so that one saver writes both (package rules).
	Listening *Listening `json:"listening,omitempty"`
}

// Listening is how much music was heard on one day, for the daily limit.
type Listening struct {
	Day     string  `json:"day"`     // the local date it counts for, "2006-01-02"
	Seconds float64 `json:"seconds"` // music heard that day
	// Announced: the box has said that the limit is reached, that day.
	Announced bool `json:"announced,omitempty"`
	// LastSeen is the newest time known from a set clock, for a start
	// before the network time is set (the Pi has no real-time clock).
	LastSeen time.Time `json:"last_seen,omitzero"`
}

// Queue is the queue that was loaded when the state was saved.
type Queue struct {
	FolderID string `json:"folder_id"`
	Index    int    `json:"index"`
	// TrackID names the track at Index, so a restart finds it again where
	// the index alone would not (a podcast's episodes move down as new
	// ones arrive); empty in files written before it was kept.
	TrackID  string  `json:"track_id,omitempty"`
	Position float64 `json:"position"` // seconds into the track
	// The play modes of the queue (package player, modes.go): the mode it
	// started in, its switches, and for shuffle the play order, a
	// permutation of the folder's track indices. Absent in files written
	// before they were kept: a normal queue.
	Mode      string `json:"mode,omitempty"`
	Shuffle   bool   `json:"shuffle,omitempty"`
	Repeat    string `json:"repeat,omitempty"`
	StopAtEnd bool   `json:"stop_at_end,omitempty"`
	Order     []int  `json:"order,omitempty"`
}

// ResumePoint is where listening stopped in one folder.
type ResumePoint struct {
	Index     int       `json:"index"`
	TrackID   string    `json:"track_id"`
	Position  float64   `json:"position"`
	UpdatedAt time.Time `json:"updated_at"`
	// Mode is the play mode the folder was left in and Order its shuffled
	// play order, so that a resume continues both; absent in files
	// written before they were kept, and Order when it was not shuffled.
	Mode  string `json:"mode,omitempty"`
	Order []int  `json:"order,omitempty"`
}

// Clone returns a deep copy, so the saver can write it while the player goes on.
func (s Saved) Clone() Saved {
	c := s
	if s.Queue != nil {
		q := *s.Queue
		q.Order = slices.Clone(q.Order)
		c.Queue = &q
	}
	if s.Listening != nil {
		l := *s.Listening
		c.Listening = &l
	}
	c.Resume = make(map[string]ResumePoint, len(s.Resume))
	for k, v := range s.Resume {
		v.Order = slices.Clone(v.Order)
		c.Resume[k] = v
	}
	return c
}
