package player

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/state"
)

// Remote is a track that arrives over the network: a radio station or a
// podcast episode (package stream). It is a track source like a file, with
// what the network adds. The player goroutine calls it, so no method may
// wait for the network: Stream gives what is buffered and silence while the
// network is behind.
type Remote interface {
	// Stream fills samples at the rate it was opened at; false at the end of an episode,
	// or when it failed for good (Err).
	Stream(samples [][2]float64) (int, bool)
	Err() error
	// Back gives back frames Stream gave that were not heard.
	Back(frames int)
	// Seek jumps within an episode; a station only takes 0 (listen anew).
	Seek(seconds float64) error
	// Seconds is the position: into the episode, or of listening.
	Seconds() float64
	// Duration in seconds, 0 for a station or when unknown.
	Duration() float64
	// Live reports a station: no duration, no seeking, no resume point.
	Live() bool
	// Title is a station's title as heard now, nil when it has none.
	Title() *string
	// Health: the buffer is filling; or a problem while retrying after it
	// ran dry; or a failure for good.
	Health() (buffering bool, problem string, failed error)
	Close() error
}

// RemoteOpener opens the remote track of t (t.URL set), to stream at rate
// (the output's: the remote's own rate is not known before it has
// connected). It must not wait for the network: the player goroutine calls
// it, and so may its prefetch.
type RemoteOpener func(t library.Track, rate int) (Remote, error)

// Buffering is the state while a stream fills its buffer; the player plays
// on by itself when it is full.
const Buffering State = "buffering"

// episodeKeys bounds the per-episode resume points kept.
const episodeKeys = 500

// finishedTail: an episode left within its last seconds was heard to the end.
const finishedTail = 10.0

// remoteDecoder lets a Remote stand where a decoder stands in a track.
type remoteDecoder struct {
	r    Remote
	rate float64
}

func (d remoteDecoder) Stream(s [][2]float64) (int, bool) { return d.r.Stream(s) }
func (d remoteDecoder) Err() error                        { return d.r.Err() }
func (d remoteDecoder) Len() int                          { return frames(d.r.Duration(), d.rate) }
func (d remoteDecoder) Position() int                     { return frames(d.r.Seconds(), d.rate) }
func (d remoteDecoder) Seek(p int) error                  { return d.r.Seek(float64(p) / d.rate) }
func (d remoteDecoder) Close() error                      { return d.r.Close() }

// frames is sec at rate to the nearest frame: seconds that came from a
// frame count (a Seek's frame over the rate) give back that count, where
// truncating the product, a hair below it, lost a frame.
func frames(sec, rate float64) int { return int(math.Round(sec * rate)) }

func (p *Player) openRemote(t library.Track, item QueueItem, rate int) (*track, error) {
	if p.cfg.OpenRemote == nil {
		return nil, fault.New(fault.Unavailable, "streams are not configured")
	}
	r, err := p.cfg.OpenRemote(t, rate)
	if err != nil {
		return nil, err
	}
	tr := &track{item: item, dec: remoteDecoder{r, float64(rate)}, remote: r, rate: rate,
		format: beep.Format{SampleRate: beep.SampleRate(rate), NumChannels: 2, Precision: 2}}
	tr.duration = r.Duration()
	tr.restream()
	return tr, nil
}

// live reports a station playing.
func (t *track) live() bool { return t.remote != nil && t.remote.Live() }

// remoteStatus adds what a stream tells to the status: the title, and while
// the music plays, whether the listener hears it, waits for the buffer, or
// hears nothing because the network failed.
func (p *Player) remoteStatus(st *Status) {
	r := p.cur.remote
	st.Live = r.Live()
	if st.Live {
		st.NowPlaying = r.Title()
	}
	if n, ok := r.(interface{ Notice() string }); ok {
		st.Notice = n.Notice()
	}
	if p.state != Playing || len(p.clips) > 0 {
		return
	}
	switch buffering, problem, failed := r.Health(); {
	case failed != nil:
		st.State, st.Error = Failed, failed.Error()
	case problem != "":
		st.State, st.Error = Failed, "stream: "+problem
	case buffering:
		st.State = Buffering
	}
}

// checkRemote ends playing a station that failed for good (an episode that
// failed is skipped like a broken file): the status says why, and play
// tries anew.
func (p *Player) checkRemote() {
	if p.cur == nil || !p.cur.live() || p.state != Playing || len(p.clips) > 0 {
		return
	}
	if _, _, err := p.cur.remote.Health(); err != nil {
		p.state = Failed
		p.lastErr = err.Error()
		p.publish(true)
	}
}

// retryRemote makes play after a stream's failure start it anew.
func (p *Player) retryRemote() {
	if p.state == Failed && p.cur != nil && p.cur.remote != nil {
		p.closeTrack()
	}
}

func sameTitle(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// episodeKey is where a podcast episode's own resume point is kept, beside
// the folder's: a child may come back to any episode.
func episodeKey(trackID string) string { return "episode-" + trackID }

// recordEpisode keeps the resume point of the podcast episode playing.
func (p *Player) recordEpisode(rp state.ResumePoint) {
	if p.folder.Kind != library.KindPodcast {
		return
	}
	p.saved.Resume[episodeKey(rp.TrackID)] = rp
	var keys []string
	for k := range p.saved.Resume {
		if len(k) > 8 && k[:8] == "episode-" {
			keys = append(keys, k)
		}
	}
	if len(keys) <= episodeKeys {
		return
	}
	slices.SortFunc(keys, func(a, b string) int {
		return p.saved.Resume[a].UpdatedAt.Compare(p.saved.Resume[b].UpdatedAt)
	})
	for _, k := range keys[:len(keys)-episodeKeys] {
		delete(p.saved.Resume, k)
	}
}

// episodeResume is where episode index of podcast f was left, if anywhere.
func (p *Player) episodeResume(f library.Folder, index int) (float64, bool) {
	if f.Kind != library.KindPodcast {
		return 0, false
	}
	t := f.Tracks[index]
	rp, ok := p.saved.Resume[episodeKey(t.ID)]
	if !ok || (t.Duration > 0 && rp.Position > t.Duration-finishedTail) {
		return 0, false
	}
	return rp.Position, true
}

// trackEnded forgets the episode that was heard to its end.
func (p *Player) trackEnded() {
	if p.folder != nil && p.folder.Kind == library.KindPodcast && p.cur != nil {
		if _, ok := p.saved.Resume[episodeKey(p.cur.item.ID)]; ok {
			delete(p.saved.Resume, episodeKey(p.cur.item.ID))
			p.dirty = true
		}
	}
}

// restoreIndex finds the saved queue's track again, by its id: a
// podcast's episodes move down as new ones arrive. A queue saved without
// the id (an older file) goes by the folder's resume point in a podcast.
func (p *Player) restoreIndex(f library.Folder, q *state.Queue) int {
	if q.TrackID != "" {
		for i, t := range f.Tracks {
			if t.ID == q.TrackID {
				return i
			}
		}
	}
	rp, ok := p.saved.Resume[f.ID]
	if f.Kind != library.KindPodcast || !ok {
		return q.Index
	}
	for i, t := range f.Tracks {
		if t.ID == rp.TrackID {
			return i
		}
	}
	return q.Index
}

// MarshalJSON writes duration as null for a station, which has none.
func (s Status) MarshalJSON() ([]byte, error) {
	type plain Status
	if !s.Live {
		return json.Marshal(plain(s))
	}
	return json.Marshal(struct {
		plain
		Duration *float64 `json:"duration"`
	}{plain: plain(s)})
}
