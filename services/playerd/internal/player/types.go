// Package player is the box's player engine. One goroutine (Run) owns all
// player state; the API, the touch screen and the speech service talk to it
// through Do and Announce, and read published snapshots through Status and
// Changed.
package player

import (
	"slices"

	"github.com/storybox/storybox/services/internal/fault"
)

// State is the player state reported in the status.
type State string

const (
	Playing State = "playing"
	Paused  State = "paused"
	Stopped State = "stopped"
	Failed  State = "error"
)

// Actions of POST /api/command.
const (
	ActToggle      = "toggle"
	ActPlay        = "play"
	ActPause       = "pause"
	ActStop        = "stop"
	ActNext        = "next"
	ActPrevious    = "previous"
	ActSeek        = "seek"
	ActVolume      = "volume"
	ActVolumeDelta = "volume_delta"
	ActFolder      = "folder"
	ActResume      = "resume"
	// The play modes of the current queue (modes.go).
	ActShuffle   = "shuffle"    // value: true or false
	ActRepeat    = "repeat"     // value: "off", "folder" or "track"
	ActSeekDelta = "seek_delta" // value: signed seconds from the position
	// ActSleepTimer belongs to the parental rules (the Gate): the player
	// checks its fields and the gate carries it out once admitted.
	ActSleepTimer = "sleep_timer"
)

// Sleep timer ends given as words in "value" instead of minutes.
const (
	UntilTrack  = "track"  // the end of the current track
	UntilFolder = "folder" // the end of the queue
)

// Command is one player command, as POST /api/command carries it. The touch
// screen sends the same commands, so every rule applies to every input path.
// On the wire "value" is a number, or for sleep_timer also one of the
// words UntilTrack and UntilFolder, which decode into Until (command_json.go).
//
// "value" is a boolean for shuffle (On) and a word for repeat (Word). Mode
// overrides the folder's own mode for folder (a card's mapping may carry
// one).
type Command struct {
	Action    string   `json:"action"`
	FolderID  string   `json:"folder_id,omitempty"`
	Value     *float64 `json:"value,omitempty"`
	ItemIndex *int     `json:"item_index,omitempty"`
	Mode      Mode     `json:"mode,omitempty"`
	Until     string   `json:"-"`
	Word      string   `json:"-"`
	On        *bool    `json:"-"`
}

// ErrClosed is returned by Do and Announce once the player has shut down.
// Other refusals carry the kinds of package fault: fault.Invalid for a
// malformed command or an unknown folder, fault.Conflict for one that is not
// possible right now (play with an empty queue), fault.Busy for a full
// announcement queue; refusals of the Gate are its own (fault.Forbidden).
var ErrClosed = fault.New(fault.Unavailable, "player is shut down")

// QueueItem is one track of the queue as the status reports it.
type QueueItem struct {
	ID           string  `json:"id"`
	Title        string  `json:"title"`
	Artist       string  `json:"artist,omitempty"`
	Album        string  `json:"album,omitempty"`
	Duration     float64 `json:"duration"`
	Provider     string  `json:"provider"`
	ResumePolicy string  `json:"resume_policy"`
}

// Status is an immutable snapshot of the player, the body of GET /api/status.
// Treat it as read-only: Queue is shared between snapshots.
type Status struct {
	State     State       `json:"state"`
	Backend   string      `json:"backend"`
	FolderID  *string     `json:"folder_id"`
	Folder    *string     `json:"folder"`
	Cover     *string     `json:"cover"`
	Queue     []QueueItem `json:"queue"`
	Index     int         `json:"index"`
	Position  float64     `json:"position"`
	Duration  float64     `json:"duration"`
	Volume    int         `json:"volume"`
	MaxVolume int         `json:"max_volume"`
	// Output is where the sound goes: OutputSpeaker or OutputHeadphones.
	Output     string  `json:"output"`
	NowPlaying *string `json:"now_playing"`
	Speaking   bool    `json:"speaking"`
	// Normalize is the loudness normalisation of what plays; null when
	// nothing is loaded.
	Normalize *Normalization `json:"normalize"`
	Error     string         `json:"error,omitempty"`
	// Shuffle and Repeat are the play switches of the queue, Mode the
	// mode its folder started in ("" with no folder; modes.go).
	Shuffle bool   `json:"shuffle"`
	Repeat  string `json:"repeat"`
	Mode    Mode   `json:"mode,omitempty"`
	// Waiting is the folder calm mode holds back until the track ends
	// (calm.go); null when none.
	Waiting *Waiting `json:"waiting"`
	// Notice says a station plays less than it sends: an HE-AAC station
	// plays its AAC-LC core.
	Notice string `json:"notice,omitempty"`
	// Jumps counts the times a track was opened or the position moved by
	// a command rather than by playing (seek, previous restarting the
	// track): the event feed tells clients, which extrapolate the
	// position, of a jump that leaves everything else as it was.
	Jumps uint64 `json:"-"`
	// Live: a station plays; its duration is null in JSON.
	Live bool `json:"-"`
	// Final: the current track is the last of the play order (in single
	// and random_one: of this start), so the folder ends with it; a
	// repeating folder ends a pass there. The sleep timer's "folder" ends
	// with it.
	Final bool `json:"-"`
	// CanNext: a next command moves to another track (MPRIS CanGoNext).
	CanNext bool `json:"-"`
}

// SamePlayback reports whether a and b differ at most in the position: the
// player then moves the position of its snapshot instead of building
// another, and GET /api/status writes it into the encoding it has.
func SamePlayback(a, b Status) bool {
	return a.State == b.State && a.Backend == b.Backend &&
		sameString(a.FolderID, b.FolderID) && sameString(a.Folder, b.Folder) && sameString(a.Cover, b.Cover) &&
		sameQueue(a.Queue, b.Queue) && a.Index == b.Index && a.Duration == b.Duration &&
		a.Volume == b.Volume && a.MaxVolume == b.MaxVolume && a.Output == b.Output && sameString(a.NowPlaying, b.NowPlaying) &&
		a.Speaking == b.Speaking && sameNormalization(a.Normalize, b.Normalize) && a.Error == b.Error && a.Notice == b.Notice &&
		a.Shuffle == b.Shuffle && a.Repeat == b.Repeat && a.Mode == b.Mode && sameWaiting(a.Waiting, b.Waiting) && a.Jumps == b.Jumps && a.Live == b.Live && a.Final == b.Final && a.CanNext == b.CanNext
}

func sameString(a, b *string) bool {
	return a == b || a != nil && b != nil && *a == *b
}

// sameQueue: snapshots share their queue until it changes, so comparing
// the items is rare.
func sameQueue(a, b []QueueItem) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	return len(a) == 0 || &a[0] == &b[0] || slices.Equal(a, b)
}
