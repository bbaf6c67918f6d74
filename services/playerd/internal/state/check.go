package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"

	"github.com/storybox/storybox/services/internal/fault"
)

// maxResume bounds the resume points of a restored state: one per folder of
// a very large library.
const maxResume = 100000

// Parse decodes a whole state document strictly (unknown fields and
// trailing data are refused) and checks its values: the check for
// state.json in a backup. Errors are fault.Invalid.
func Parse(data []byte) (Saved, error) {
	var s Saved
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Saved{}, fault.New(fault.Invalid, "not a player state: %v", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return Saved{}, fault.New(fault.Invalid, "not a player state: data after the object")
	}
	bad := func(format string, a ...any) (Saved, error) { return Saved{}, fault.New(fault.Invalid, format, a...) }
	if s.Volume < 0 || s.Volume > 100 {
		return bad("volume must be 0..100, not %d", s.Volume)
	}
	if q := s.Queue; q != nil && (q.FolderID == "" || q.Index < 0 || !seconds(q.Position)) {
		return bad("queue: folder_id, index >= 0 and position >= 0 are required")
	}
	if q := s.Queue; q != nil && !permutation(q.Order) {
		return bad("queue: order must hold each index from 0 once")
	}
	if len(s.Resume) > maxResume {
		return bad("resume: at most %d points", maxResume)
	}
	for id, rp := range s.Resume {
		if id == "" || len(id) > 64 || rp.Index < 0 || !seconds(rp.Position) || len(rp.TrackID) > 64 || len(rp.Mode) > 16 || !permutation(rp.Order) {
			return bad("resume[%q]: a folder id, index >= 0, position >= 0 and an order of each index once are required", id)
		}
	}
	if s.Resume == nil {
		s.Resume = map[string]ResumePoint{}
	}
	return s, nil
}

// Check is Parse for callers that only need the verdict.
func Check(data []byte) error {
	_, err := Parse(data)
	return err
}

func seconds(v float64) bool { return v >= 0 && !math.IsInf(v, 0) && !math.IsNaN(v) }

// maxOrder bounds a saved play order: the tracks of a very large folder.
const maxOrder = 100000

// permutation reports whether order holds each of 0..len-1 once (an empty
// order is the folder's own).
func permutation(order []int) bool {
	if len(order) > maxOrder {
		return false
	}
	seen := make([]bool, len(order))
	for _, i := range order {
		if i < 0 || i >= len(order) || seen[i] {
			return false
		}
		seen[i] = true
	}
	return true
}
