package stream

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/gopxl/beep/v2"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/decode"
	"github.com/storybox/storybox/services/playerd/internal/fetch"
	"github.com/storybox/storybox/services/playerd/internal/output"
	"github.com/storybox/storybox/services/playerd/internal/resample"
)

// resampleQuality is the player's (track.go): clean for speech and music at
// about 1 % of a Pi core.
const resampleQuality = 4

// chunk is how many frames are decoded between buffer updates.
const chunk = output.PeriodFrames

// errEnded: a station's server closed the stream (it should not end).
var errEnded = errors.New("the station ended the stream")

// resume is where a connection starts in an episode.
type resume struct {
	media  float64 // seconds into the episode the next frame is
	offset int64   // byte to ask the server for
	skip   int     // decoded frames to drop before the buffer
	length int64   // size of the episode in bytes, once known
	mp3    bool    // byte offsets can be estimated from the duration
}

// run is the stream's goroutine: connect, decode into the buffer, and on a
// drop wait and connect again, until the source stops or gives up.
func (s *Source) run(ctx context.Context, gen int, from float64) {
	backoff := s.cfg.MinBackoff
	var failingSince time.Time
	at := resume{}
	if !s.opts.Live {
		at = resume{media: from, skip: int(from * float64(s.opts.Rate))}
	}
	for {
		produced, err := s.session(ctx, gen, &at)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			s.settle(gen, func() { s.ended, s.running = true, false })
			return
		case errors.Is(err, errIdle):
			s.settle(gen, func() {
				s.running = false
				s.ring.reset()
				s.marks, s.waiting = nil, true
			})
			return
		case permanent(err):
			s.settle(gen, func() { s.failed, s.running = failure{"stream: " + describe(err), err}, false })
			return
		}
		// A drop after a healthy stretch is tried again at once, while the
		// buffer plays on; attempts that keep failing wait longer and longer.
		wait := backoff
		if produced >= healthySeconds*s.opts.Rate {
			wait, backoff, failingSince = 0, s.cfg.MinBackoff, time.Time{}
		}
		if failingSince.IsZero() {
			failingSince = time.Now()
		}
		if time.Since(failingSince) > s.cfg.GiveUp {
			msg := fmt.Sprintf("stream: gave up after %v of failed attempts: %s", s.cfg.GiveUp.Round(time.Second), describe(err))
			s.settle(gen, func() { s.failed, s.running = failure{msg, fault.Wrap(fault.Unavailable, err, msg)}, false })
			return
		}
		msg := describe(err) + "; reconnecting"
		if wait > 0 {
			msg = fmt.Sprintf("%s; trying again in %v", describe(err), wait.Round(100*time.Millisecond))
		}
		s.settle(gen, func() {
			s.problem = msg
			s.stats.Failures++
			s.stats.LastRetry = wait
		})
		if s.cfg.OnRetry != nil {
			s.cfg.OnRetry(s.opts.URL, err, wait)
		}
		if wait == 0 {
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

// permanent reports an error that trying again cannot cure: a format the
// box cannot decode, a URL it must not fetch.
func permanent(err error) bool {
	var f forbidden
	return errors.Is(err, fault.Unsupported) || errors.Is(err, fetch.ErrForbidden) || errors.As(err, &f)
}

// forbidden is a URL the policy refuses.
type forbidden struct{ error }

func (f forbidden) Unwrap() error { return f.error }

func (s *Source) checkURL(raw string) (*url.URL, error) {
	u, err := s.cfg.Policy.CheckURL(raw)
	if err != nil {
		return nil, forbidden{err}
	}
	return u, nil
}

// failure is why a stream was given up, as the status shows it: what
// failed, not the addresses and internals of the cause it wraps.
type failure struct {
	msg   string
	cause error
}

func (f failure) Error() string { return f.msg }
func (f failure) Unwrap() error { return f.cause }

// describe is an error as the status shows it.
func describe(err error) string {
	if errors.Is(err, errEnded) {
		return err.Error()
	}
	return fetch.Describe(err)
}

// session is one connection: it returns the frames it buffered and why it
// ended (nil: the episode is complete).
func (s *Source) session(ctx context.Context, gen int, at *resume) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c, err := s.connect(ctx, at)
	if errors.Is(err, errPastEnd) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer c.body.Close()
	s.settle(gen, func() { s.stats.Connects++ })

	var titles []icyTitle
	var r io.Reader = c.body
	if c.metaint > 0 && s.opts.Live {
		r = newICYReader(r, c.metaint, func(pos int64, t string) {
			titles = append(titles, icyTitle{pos, t})
		})
	}
	live, err := decode.OpenLive(r, c.contentType)
	if err != nil {
		return 0, err
	}
	format := live.Format()
	var src beep.Streamer = live
	if int(format.SampleRate) != s.opts.Rate {
		src = resample.New(resampleQuality, format.SampleRate, beep.SampleRate(s.opts.Rate), live)
	}
	buf := make([][2]float64, chunk)
	produced, oggTitle, notice := 0, "", ""
	start := c.offset
	for {
		n, ok := src.Stream(buf)
		frames := buf[:n]
		if at.skip > 0 {
			d := min(at.skip, n)
			at.skip -= d
			frames = frames[d:]
		}
		// Titles whose bytes the decoder has passed apply after these frames.
		var now []string
		for len(titles) > 0 && titles[0].at <= live.Consumed() {
			now = append(now, titles[0].title)
			titles = titles[1:]
		}
		if t := live.Title(); t != oggTitle && s.opts.Live {
			oggTitle = t
			now = append(now, t)
		}
		if err := s.put(ctx, gen, frames, now); err != nil {
			return produced, err
		}
		produced += len(frames)
		at.media += float64(len(frames)) / float64(s.opts.Rate)
		if n := live.Notice(); n != notice {
			notice = n
			s.settle(gen, func() { s.notice = n })
		}
		if !s.opts.Live && at.mp3 {
			at.offset = start + live.Consumed()
		}
		if !ok {
			break
		}
	}
	if err := live.Err(); err != nil {
		return produced, err
	}
	if s.opts.Live {
		return produced, errEnded
	}
	if at.length > 0 && at.offset < at.length && at.mp3 {
		return produced, io.ErrUnexpectedEOF // dropped before the end: continue from here
	}
	return produced, nil
}

type icyTitle struct {
	at    int64
	title string
}

// conn is an open audio response.
type conn struct {
	body        io.ReadCloser
	contentType string
	metaint     int
	offset      int64 // byte of the episode the body starts at
}

// maxRequests bounds the requests of one connection attempt through
// playlists.
const maxRequests = 8

// errRange: the server takes ranges, ask again for the right byte.
var errRange = errors.New("ask again with a range")

// errPastEnd: the server has no bytes from the one asked for on: the
// episode is over (a seek to its end).
var errPastEnd = errors.New("past the episode's end")

// connect opens the stream at at (episodes: from a byte offset where the
// format allows), resolving playlists.
func (s *Source) connect(ctx context.Context, at *resume) (*conn, error) {
	u, err := s.checkURL(s.opts.URL)
	if err != nil {
		return nil, err
	}
	budget := maxRequests
	return s.open(ctx, u, at, 0, &budget)
}

func (s *Source) open(ctx context.Context, u *url.URL, at *resume, depth int, budget *int) (*conn, error) {
	if *budget--; *budget < 0 {
		return nil, fault.New(fault.Unsupported, "the playlist leads to more than %d requests", maxRequests)
	}
	c, entries, err := s.request(ctx, u, at)
	if errors.Is(err, errRange) {
		c, entries, err = s.request(ctx, u, at)
	}
	if err != nil || c != nil {
		return c, err
	}
	if depth == maxPlaylistDepth {
		return nil, fault.New(fault.Unsupported, "playlists nested more than %d deep", maxPlaylistDepth)
	}
	// The entries in order: the first that plays is the stream.
	var last error
	for _, e := range entries {
		eu, err := s.checkURL(e.String())
		if err == nil {
			var c *conn
			if c, err = s.open(ctx, eu, at, depth+1, budget); err == nil {
				return c, nil
			}
		}
		last = err
		if *budget <= 0 {
			break
		}
	}
	return nil, last
}

// request fetches u: an audio response becomes a conn; a playlist is read
// and its entries returned.
func (s *Source) request(ctx context.Context, u *url.URL, at *resume) (*conn, []*url.URL, error) {
	h := http.Header{}
	if s.opts.Live {
		h.Set("Icy-MetaData", "1")
	} else if at.offset > 0 {
		h.Set("Range", "bytes="+strconv.FormatInt(at.offset, 10)+"-")
	}
	resp, err := fetch.Get(ctx, s.cfg.Client, u.String(), h)
	if err != nil {
		return nil, nil, err
	}
	ok := false
	defer func() {
		if !ok {
			resp.Body.Close()
		}
	}()
	if resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && h.Get("Range") != "" {
		return nil, nil, errPastEnd // 416 to a range from byte N on: the episode has fewer bytes
	}
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusPartialContent {
		return nil, nil, fault.New(fault.Unavailable, "the server answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	br := bufio.NewReaderSize(resp.Body, 512)
	head, _ := br.Peek(64)
	ct := resp.Header.Get("Content-Type")
	if kind := playlistKind(ct, resp.Request.URL, head); kind != "" {
		data, err := fetch.ReadAll(br, maxPlaylist)
		if err != nil {
			return nil, nil, fmt.Errorf("playlist: %w", err)
		}
		entries, err := parsePlaylist(kind, data, resp.Request.URL)
		if err != nil {
			return nil, nil, err
		}
		return nil, entries, nil
	}
	metaint, err := parseMetaint(resp.Header.Get("Icy-Metaint"))
	if err != nil && s.opts.Live {
		return nil, nil, fault.New(fault.Unsupported, "%v", err)
	}
	c := &conn{body: struct {
		io.Reader
		io.Closer
	}{br, resp.Body}, contentType: ct, metaint: metaint}
	if !s.opts.Live {
		if err := s.position(ctx, c, resp, at); err != nil {
			return nil, nil, err
		}
	}
	ok = true
	return c, nil, nil
}

// position makes an episode's response start where at says, learning the
// episode's size on the way. An MP3 starts at a byte estimated from the
// duration; other formats are decoded from the start and the frames before
// the position dropped (at.skip).
func (s *Source) position(ctx context.Context, c *conn, resp *http.Response, at *resume) error {
	mt, _, _ := mime.ParseMediaType(c.contentType)
	at.mp3 = mt == "audio/mpeg" || mt == "audio/mp3" || strings.EqualFold(path.Ext(resp.Request.URL.Path), ".mp3")
	if resp.StatusCode == http.StatusPartialContent {
		start, total, ok := contentRange(resp.Header.Get("Content-Range"))
		if !ok || start != at.offset {
			return fault.New(fault.Unavailable, "the server sent another part of the episode than asked for")
		}
		c.offset, at.length = start, total
	} else {
		c.offset, at.length = 0, resp.ContentLength
	}
	if at.skip > 0 && at.mp3 && s.opts.Duration > 0 && at.length > 0 && c.offset == 0 && at.offset == 0 {
		// The first connection of a resumed MP3: start at the estimated byte,
		// asked for again where the server takes ranges.
		at.offset = int64(at.media / s.opts.Duration * float64(at.length))
		at.skip = 0
		if strings.EqualFold(resp.Header.Get("Accept-Ranges"), "bytes") {
			return errRange
		}
	}
	if at.mp3 && at.offset > c.offset {
		// No range support: read up to the byte (no decoding needed).
		if _, err := io.CopyN(io.Discard, c.body, at.offset-c.offset); err != nil {
			return err
		}
		c.offset = at.offset
	}
	if !at.mp3 && c.offset == 0 {
		at.skip = int(at.media * float64(s.opts.Rate)) // decode from the start up to the position
	}
	return nil
}

// contentRange parses "bytes START-END/TOTAL"; TOTAL may be "*" (0).
func contentRange(v string) (start, total int64, ok bool) {
	v, found := strings.CutPrefix(strings.TrimSpace(v), "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, tot, found := strings.Cut(v, "/")
	a, _, found2 := strings.Cut(rng, "-")
	if !found || !found2 {
		return 0, 0, false
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return 0, 0, false
	}
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return start, total, true
}
