// Package server serves syncd on its Unix socket as HTTP+JSON for playerd
// (shapes: package syncapi).
//
//	GET    /status          this box's device id, the household, how far each box is
//	GET    /found           the boxes on the home network that could join
//	POST   /boxes           add a box {device_id,name,address}; Syncthing starts with the first
//	DELETE /boxes/{id}      remove a box; it loses access at once
//	PUT    /media           which media folders are shared {all,folders}
//	GET    /events?since=N&wait=30s  the changes Syncthing made (long poll)
//
// Errors are {"error","kind"} (daemon.ErrorBody). Syncthing's API key is
// never answered.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/syncd/internal/engine"
	"github.com/storybox/storybox/services/syncd/internal/members"
)

// Deps are what the server answers from.
type Deps struct {
	Engine  *engine.Engine
	Members *members.Store
	Feed    *engine.Feed
	// Found lists the boxes seen by mDNS; nil: none are looked for.
	Found func() []syncapi.FoundBox
	// Paths of the shared folders, as Status shows them.
	Household, Media string
}

// NewHandler returns the routes.
func NewHandler(d Deps, log *slog.Logger) http.Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sock := daemon.Socket(log)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		answer.JSON(w, http.StatusOK, Status(r.Context(), d))
	})
	mux.HandleFunc("GET /found", func(w http.ResponseWriter, r *http.Request) {
		answer.JSON(w, http.StatusOK, found(d))
	})
	mux.HandleFunc("POST /boxes", func(w http.ResponseWriter, r *http.Request) {
		var req syncapi.AddBox
		err := sock.Decode(r, &req)
		var changed bool
		if err == nil {
			changed, err = d.Members.Add(members.Box{DeviceID: req.DeviceID, Name: req.Name, Address: req.Address}, d.Engine.DeviceID())
		}
		if err != nil {
			sock.Fail(w, r, err)
			return
		}
		if changed {
			d.Engine.Changed()
		}
		answer.JSON(w, http.StatusOK, Status(r.Context(), d))
	})
	mux.HandleFunc("DELETE /boxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		if err := d.Members.Remove(r.PathValue("id")); err != nil {
			sock.Fail(w, r, err)
			return
		}
		d.Engine.Changed()
		answer.JSON(w, http.StatusOK, Status(r.Context(), d))
	})
	mux.HandleFunc("PUT /media", func(w http.ResponseWriter, r *http.Request) {
		var req syncapi.Media
		err := sock.Decode(r, &req)
		if err == nil {
			err = d.Members.SetMedia(req)
		}
		if err != nil {
			sock.Fail(w, r, err)
			return
		}
		d.Engine.Changed()
		answer.JSON(w, http.StatusOK, d.Members.Media())
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		since, err := strconv.ParseInt(q.Get("since"), 10, 64)
		if q.Get("since") == "" {
			since, err = 0, nil
		}
		wait := 30 * time.Second
		if v := q.Get("wait"); v != "" && err == nil {
			wait, err = time.ParseDuration(v)
		}
		if err != nil || since < 0 || wait < 0 || wait > time.Minute {
			sock.Fail(w, r, fault.New(fault.Invalid, "want since=N (0 or more) and wait=DURATION (at most 1m)"))
			return
		}
		answer.JSON(w, http.StatusOK, d.Feed.After(r.Context(), since, wait))
	})
	return daemon.Handler(sock, mux)
}

// Status is the household as this box sees it now. What Syncthing cannot
// tell (it is not running, or does not answer) is left at zero, and the
// state says why.
func Status(ctx context.Context, d Deps) syncapi.Status {
	state, lastErr := d.Engine.State()
	st := syncapi.Status{
		DeviceID: d.Engine.DeviceID(), Port: d.Engine.Port(), State: state, LastError: lastErr,
		Boxes: []syncapi.Box{}, Folders: []syncapi.Folder{}, Media: d.Members.Media(),
	}
	running := state == syncapi.StateRunning
	var connected map[string]bool
	if running {
		// Syncthing busy hashing answers late; the status then tells
		// less rather than come late itself (playerd waits 10 s).
		ctx, cancel := context.WithTimeout(ctx, 4*time.Second)
		defer cancel()
		connected, _ = d.Engine.Client.Connected(ctx)
		for _, f := range []struct{ id, path string }{{syncapi.HouseholdFolder, d.Household}, {syncapi.MediaFolder, d.Media}} {
			if f.id == syncapi.MediaFolder && !st.Media.All && len(st.Media.Folders) == 0 {
				continue
			}
			fs, err := d.Engine.Client.Folder(ctx, f.id)
			if err != nil {
				fs = syncapi.Folder{ID: f.id, State: "unknown", Error: fault.Message(err)}
			}
			fs.Path = f.path
			st.Folders = append(st.Folders, fs)
		}
		ctxDone := ctx
		for _, b := range d.Members.Boxes() {
			box := syncapi.Box{DeviceID: b.DeviceID, Name: b.Name, Address: b.Address, Connected: connected[b.DeviceID]}
			if box.Connected {
				if rem, err := d.Engine.Client.Remote(ctxDone, b.DeviceID); err == nil {
					box.NeedFiles, box.NeedBytes, box.Completion = rem.NeedFiles, rem.NeedBytes, rem.Completion
				}
			}
			st.Boxes = append(st.Boxes, box)
		}
		return st
	}
	for _, b := range d.Members.Boxes() {
		st.Boxes = append(st.Boxes, syncapi.Box{DeviceID: b.DeviceID, Name: b.Name, Address: b.Address})
	}
	return st
}

func found(d Deps) syncapi.Found {
	out := syncapi.Found{Boxes: []syncapi.FoundBox{}}
	if d.Found == nil {
		return out
	}
	in := map[string]bool{}
	for _, b := range d.Members.Boxes() {
		in[b.DeviceID] = true
	}
	for _, f := range d.Found() {
		f.InHousehold = in[f.DeviceID]
		out.Boxes = append(out.Boxes, f)
	}
	return out
}
