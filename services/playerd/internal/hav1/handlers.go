package hav1

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/message"
	"github.com/storybox/storybox/services/playerd/internal/pairing"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// capabilities are the commands and features this box carries out; the
// client builds its controls from them, so nothing is listed that would
// fail.
func (h *handler) capabilities() []string {
	c := []string{"play", "pause", "stop", "next", "previous", "set_volume", "seek", "media_metadata", "screenshot", "outputs"}
	if h.Speaker != nil {
		c = append(c, "speak")
	}
	if h.Display != nil {
		c = append(c, "message")
	}
	if h.Power != nil {
		c = append(c, "restart", "shutdown")
	}
	if h.Events != nil {
		c = append(c, "events")
	}
	return c
}

func (h *handler) info(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]any{
		"api_version":      1,
		"device_id":        h.Pairing.DeviceID(),
		"name":             h.Name,
		"product":          "mupibox", // the contract's product family, as in the mDNS record
		"generation":       "ng",
		"software_version": h.Version,
		"manufacturer":     "storybox",
		"model":            "storybox",
		"capabilities":     h.capabilities(),
	})
}

// Playback is the playback part of GET /state and of playback events.
type Playback struct {
	State    string   `json:"state"`
	Provider *string  `json:"provider"`
	Title    *string  `json:"title"`
	Artist   *string  `json:"artist"`
	Album    *string  `json:"album"`
	MediaID  *string  `json:"media_id"`
	Duration *float64 `json:"duration"`
	Position *float64 `json:"position"`
	CoverURL *string  `json:"cover_url"`
	Volume   int      `json:"volume"`
	Muted    bool     `json:"muted"`
	// Beyond the contract, additively: the queue's play switches (as Home
	// Assistant's media player has them) and its folder's mode.
	Shuffle bool   `json:"shuffle"`
	Repeat  string `json:"repeat"`
	Mode    string `json:"mode,omitempty"`
}

// PlaybackOf maps the player's status to the contract's words: a stopped
// player is idle, a failed one (no audio device) unavailable.
func PlaybackOf(st player.Status) Playback {
	p := Playback{State: "idle", Volume: st.Volume, Shuffle: st.Shuffle, Repeat: st.Repeat, Mode: string(st.Mode)}
	switch st.State {
	case player.Playing:
		p.State = "playing"
	case player.Paused:
		p.State = "paused"
	case player.Buffering:
		p.State = "buffering"
	case player.Failed:
		p.State = "unavailable"
	}
	if st.Index >= 0 && st.Index < len(st.Queue) {
		q := st.Queue[st.Index]
		p.Provider, p.Title, p.MediaID = ptr(q.Provider), ptr(q.Title), ptr(q.ID)
		p.Artist, p.Album = nonEmpty(q.Artist), nonEmpty(q.Album)
		if p.Album == nil {
			p.Album = st.Folder
		}
		pos, dur := st.Position, st.Duration
		p.Position, p.Duration = &pos, &dur
		if dur <= 0 || st.Live { // a station has no duration
			p.Duration = nil
		}
	}
	if st.Cover != nil && p.Title != nil {
		p.CoverURL = ptr(Prefix + "/media/cover/current")
	}
	return p
}

func ptr[T any](v T) *T { return &v }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func (h *handler) state(w http.ResponseWriter, r *http.Request) {
	out := map[string]any{"playback": PlaybackOf(h.Player.Status())}
	if h.Device != nil {
		out["device"] = h.Device()
	} else {
		out["device"] = Device{}
	}
	if h.Metrics != nil {
		out["metrics"] = h.Metrics()
	}
	answer.JSON(w, http.StatusOK, out)
}

// cover is GET /media/cover/current: the cover of what plays now.
func (h *handler) cover(w http.ResponseWriter, r *http.Request) {
	st := h.Player.Status()
	if st.Cover == nil || st.FolderID == nil || h.Covers == nil {
		h.fail(w, r, fault.New(fault.NotFound, "nothing with a cover is playing"))
		return
	}
	leave, err := h.covers.Enter(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	defer leave()
	// The status names the cover by its URL on :8090; the catalog knows it
	// by the folder's id, whatever kind of folder it is.
	data, mimeType, err := h.Covers.Cover(*st.FolderID)
	if err != nil {
		if errors.Is(err, library.ErrNotFound) {
			err = fault.New(fault.NotFound, "nothing with a cover is playing")
		}
		h.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", mimeType)
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// screenshot is GET /screenshot: the screen as PNG, with a pairing code
// blanked out (the display does that for every screenshot it serves).
func (h *handler) screenshot(w http.ResponseWriter, r *http.Request) {
	if h.Display == nil {
		h.fail(w, r, fault.New(fault.Unavailable, "display unavailable"))
		return
	}
	png, err := h.Display.Screenshot(r.Context())
	if err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Internal, err, "screenshot failed")
		}
		h.fail(w, r, err) // too many at once: 429 rate_limited
		return
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Content-Length", strconv.Itoa(len(png)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(png)
}

// outputs is GET /outputs. The box has one output, chosen at start; it is
// listed as the active one so a client can show where the sound goes.
func (h *handler) outputs(w http.ResponseWriter, r *http.Request) {
	o := h.Output
	answer.JSON(w, http.StatusOK, map[string]any{"targets": []map[string]any{{
		"id": o.ID, "name": o.Name, "subtitle": o.Subtitle, "selectable": true, "available": true, "active": true,
	}}})
}

type selectRequest struct {
	TargetID *string `json:"target_id"`
}

func (h *handler) selectOutput(w http.ResponseWriter, r *http.Request) {
	var req selectRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.TargetID == nil {
		h.fail(w, r, malformed("target_id is required"))
		return
	}
	if *req.TargetID != h.Output.ID {
		h.fail(w, r, fault.New(fault.NotFound, "no output %q on this box", *req.TargetID))
		return
	}
	answer.JSON(w, http.StatusOK, okBody) // already the active one
}

// update is GET /update. The box does not look for updates itself (they
// are installed from a computer), so it says which version runs and leaves
// update_available out: a client shows "unknown", not a made-up "none".
func (h *handler) update(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]any{
		"software_version": h.Version,
		"update_check":     false,
		"message":          "updates are installed from a computer; the box does not check for them",
	})
}

type controlRequest struct {
	Command  *string  `json:"command"`
	Value    *float64 `json:"value"`
	Position *float64 `json:"position"`
}

// control is POST /control. Playback commands become player commands on
// the same path as the local API's, so the volume cap and the parental
// rules apply alike.
func (h *handler) control(w http.ResponseWriter, r *http.Request) {
	var req controlRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Command == nil || *req.Command == "" {
		h.fail(w, r, malformed("command is required"))
		return
	}
	cmd := player.Command{Action: *req.Command}
	switch *req.Command {
	case "play", "pause", "stop", "next", "previous":
	case "set_volume":
		if req.Value == nil {
			h.fail(w, r, malformed("set_volume needs value"))
			return
		}
		if v := *req.Value; v < 0 || v > 100 || v != math.Trunc(v) {
			h.fail(w, r, fault.New(fault.Invalid, "value must be an integer between 0 and 100"))
			return
		}
		cmd = player.Command{Action: player.ActVolume, Value: req.Value}
	case "seek":
		if req.Position == nil {
			h.fail(w, r, malformed("seek needs position"))
			return
		}
		if p := *req.Position; p < 0 || math.IsInf(p, 0) || math.IsNaN(p) {
			h.fail(w, r, fault.New(fault.Invalid, "position must be a number of seconds, at least 0"))
			return
		}
		cmd = player.Command{Action: player.ActSeek, Value: req.Position}
	case "restart", "shutdown":
		if !clientOf(r.Context()).Has(pairing.Power) {
			h.fail(w, r, scopeError(pairing.Power))
			return
		}
		action := map[string]string{"restart": "reboot", "shutdown": "poweroff"}[*req.Command]
		h.doPower(w, r, action)
		return
	default:
		h.fail(w, r, unsupported("command %q is not supported", *req.Command))
		return
	}
	if _, err := h.Player.Do(r.Context(), cmd); err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Internal, err, "command failed")
		}
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, okBody)
}

type powerRequest struct {
	Action *string `json:"action"`
}

func (h *handler) power(w http.ResponseWriter, r *http.Request) {
	var req powerRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Action == nil {
		h.fail(w, r, malformed("action is required"))
		return
	}
	if *req.Action != "reboot" && *req.Action != "poweroff" {
		h.fail(w, r, fault.New(fault.Invalid, "action must be reboot or poweroff"))
		return
	}
	h.doPower(w, r, *req.Action)
}

// doPower accepts a power action: the box saves its state and goes down
// after the answer, so the answer is 202, not a claim that it happened.
func (h *handler) doPower(w http.ResponseWriter, r *http.Request, action string) {
	if h.Power == nil {
		h.fail(w, r, unsupported("this machine cannot %s", action))
		return
	}
	if err := h.Power(action); err != nil {
		h.fail(w, r, err)
		return
	}
	if h.log != nil {
		h.log.Warn("power action requested by a paired client", "action", action, "client_id", clientOf(r.Context()).ID)
	}
	answer.JSON(w, http.StatusAccepted, map[string]bool{"success": true, "accepted": true})
}

type speakRequest struct {
	Text     *string `json:"text"`
	Language string  `json:"language"`
}

func (h *handler) speak(w http.ResponseWriter, r *http.Request) {
	var req speakRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Text == nil {
		h.fail(w, r, malformed("text is required"))
		return
	}
	if h.Speaker == nil {
		h.fail(w, r, fault.New(fault.Unavailable, "speech unavailable"))
		return
	}
	lang := req.Language // empty: the box's configured voice
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	started, err := h.Speaker.Speak(ctx, *req.Text, lang)
	if err != nil {
		if fault.KindOf(err) == fault.Internal {
			err = fault.Wrap(fault.Internal, err, "speech failed")
		}
		h.fail(w, r, err)
		return
	}
	if !started {
		answer.JSON(w, http.StatusAccepted, map[string]bool{"success": true, "accepted": true})
		return
	}
	answer.JSON(w, http.StatusOK, okBody)
}

// message is POST /message (package message).
func (h *handler) message(w http.ResponseWriter, r *http.Request) {
	message.Handler(&h.surface, h.Display, func(message.Message) any { return okBody })(w, r)
}
