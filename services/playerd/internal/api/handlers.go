package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

func (h *handler) health(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]string{"status": "ok", "version": h.Version})
}

// statusBody is the player status with the parental restrictions and the
// library scan's progress beside it (GET /api/status, the answer of POST
// /api/command).
type statusBody struct {
	player.Status
	Restrictions any `json:"restrictions,omitempty"`
	Library      any `json:"library,omitempty"`
}

// MarshalJSON adds the restrictions and the scan to the status's own
// encoding (player.Status has a MarshalJSON, which embedding would promote
// and so drop the fields).
func (b statusBody) MarshalJSON() ([]byte, error) {
	data, err := json.Marshal(b.Status)
	if err == nil && b.Restrictions != nil {
		data, err = appendField(data, "restrictions", b.Restrictions)
	}
	if err == nil && b.Library != nil {
		data, err = appendField(data, "library", b.Library)
	}
	return data, err
}

// withField encodes obj, a JSON object, with one more field.
func withField(obj any, name string, v any) ([]byte, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return appendField(data, name, v)
}

// appendField adds a field to data, an encoded JSON object.
func appendField(data []byte, name string, v any) ([]byte, error) {
	field, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(data) < 2 || data[len(data)-1] != '}' {
		return nil, fmt.Errorf("api: %s added to %.40q, not a JSON object", name, data)
	}
	out := data[:len(data)-1]
	if len(out) > 1 {
		out = append(out, ',')
	}
	out = append(out, '"')
	out = append(out, name...)
	out = append(out, '"', ':')
	out = append(append(out, field...), '}')
	return out, nil
}

func (h *handler) statusBody(st player.Status) statusBody {
	b := statusBody{Status: st}
	if h.Views.Restrictions != nil {
		b.Restrictions = h.Views.Restrictions()
	}
	if h.Views.Scan != nil {
		b.Library = h.Views.Scan()
	}
	return b
}

func (h *handler) info(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Views.Info())
}

func (h *handler) home(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Views.Home())
}

func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Views.Metrics())
}

func (h *handler) system(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Views.System())
}

func (h *handler) library(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.withModes(h.Library.Folders()))
}

func (h *handler) cover(w http.ResponseWriter, r *http.Request) {
	leave, ok := h.enter(w, r, h.heavy.covers)
	if !ok {
		return
	}
	defer leave()
	data, mimeType, err := h.Library.Cover(pathVar(r, "id"))
	if err != nil {
		if errors.Is(err, library.ErrNotFound) {
			err = fault.New(fault.NotFound, "no cover for this id")
		}
		h.fail(w, r, answer.Failed("cover could not be read", err))
		return
	}
	w.Header().Set("Content-Type", mimeType)
	w.Header().Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

// rescan is POST /api/admin/library/rescan; its body is an empty object.
func (h *handler) rescan(w http.ResponseWriter, r *http.Request) {
	if err := jsonBody.Decode(r, &struct{}{}); err != nil {
		h.fail(w, r, err)
		return
	}
	stats, err := h.Library.Scan()
	if err != nil {
		h.fail(w, r, answer.Failed("library scan failed", err))
		return
	}
	answer.JSON(w, http.StatusOK, map[string]int{"folders": stats.Folders, "tracks": stats.Tracks})
}

func (h *handler) hatStatus(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	raw, err := h.Hat.HatStatus(ctx)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, raw)
}

// command is POST /api/command: the answer is the full status after it.
func (h *handler) command(w http.ResponseWriter, r *http.Request) {
	var cmd player.Command
	if err := jsonBody.Decode(r, &cmd); err != nil {
		h.fail(w, r, err)
		return
	}
	st, err := h.Player.Do(r.Context(), cmd)
	if err != nil {
		h.fail(w, r, answer.Failed("command failed", err))
		return
	}
	answer.JSON(w, http.StatusOK, h.statusBody(st))
}

type speakRequest struct {
	Text     *string `json:"text"`
	Language string  `json:"language,omitempty"`
	// Sent by clients of the real box; accepted for compatibility.
	SourceType string `json:"source_type,omitempty"`
	SourceRef  string `json:"source_ref,omitempty"`
}

func (h *handler) speak(w http.ResponseWriter, r *http.Request) {
	var req speakRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	if req.Text == nil {
		h.fail(w, r, fault.New(fault.Invalid, "text is required"))
		return
	}
	if h.Speaker == nil {
		h.fail(w, r, errNoSpeaker)
		return
	}
	started, err := h.Speaker.Speak(r.Context(), *req.Text, req.Language)
	if err != nil {
		h.fail(w, r, answer.Failed("speech failed", err))
		return
	}
	if !started {
		answer.JSON(w, http.StatusAccepted, map[string]bool{"speaking": false, "queued": true})
		return
	}
	answer.JSON(w, http.StatusOK, map[string]bool{"speaking": true})
}
