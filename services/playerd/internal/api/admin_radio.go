package api

import (
	"context"
	"net/http"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/playerd/internal/radio"
)

// RadioAdmin is the parent's list of stations and podcasts (package radio).
type RadioAdmin interface {
	Stations() []radio.Station
	AddStation(radio.Station) (radio.Station, error)
	UpdateStation(id string, s radio.Station) (radio.Station, error)
	DeleteStation(id string) error
	Podcasts() []radio.PodcastView
	AddPodcast(ctx context.Context, p radio.Podcast) (radio.PodcastView, error)
	UpdatePodcast(ctx context.Context, id string, p radio.Podcast) (radio.PodcastView, error)
	DeletePodcast(id string) error
	RefreshPodcast(ctx context.Context, id string) (radio.PodcastView, error)
}

type stationRequest struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	CoverURL string `json:"cover_url,omitempty"`
}

type podcastRequest struct {
	URL  string `json:"url"`
	Name string `json:"name,omitempty"`
}

func (h *handler) listStations(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]any{"stations": h.Radio.Stations()})
}

func (h *handler) addStation(w http.ResponseWriter, r *http.Request) {
	var req stationRequest
	if !h.radioBody(w, r, &req) {
		return
	}
	st, err := h.Radio.AddStation(radio.Station{Name: req.Name, URL: req.URL, Cover: req.CoverURL})
	if err != nil {
		h.fail(w, r, answer.Failed("the station could not be added", err))
		return
	}
	answer.JSON(w, http.StatusCreated, st)
}

func (h *handler) updateStation(w http.ResponseWriter, r *http.Request) {
	var req stationRequest
	if !h.radioBody(w, r, &req) {
		return
	}
	st, err := h.Radio.UpdateStation(pathVar(r, "id"), radio.Station{Name: req.Name, URL: req.URL, Cover: req.CoverURL})
	if err != nil {
		h.fail(w, r, answer.Failed("the station could not be changed", err))
		return
	}
	answer.JSON(w, http.StatusOK, st)
}

func (h *handler) deleteStation(w http.ResponseWriter, r *http.Request) {
	if err := h.Radio.DeleteStation(pathVar(r, "id")); err != nil {
		h.fail(w, r, answer.Failed("the station could not be removed", err))
		return
	}
	answer.JSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

func (h *handler) listPodcasts(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, map[string]any{"podcasts": h.Radio.Podcasts()})
}

// addPodcast fetches the feed before it answers: an address that gives no
// podcast feed is refused with the reason.
func (h *handler) addPodcast(w http.ResponseWriter, r *http.Request) {
	var req podcastRequest
	if !h.radioBody(w, r, &req) {
		return
	}
	v, err := h.Radio.AddPodcast(r.Context(), radio.Podcast{URL: req.URL, Name: req.Name})
	if err != nil {
		h.fail(w, r, answer.Failed("the podcast could not be added", err))
		return
	}
	answer.JSON(w, http.StatusCreated, v)
}

func (h *handler) updatePodcast(w http.ResponseWriter, r *http.Request) {
	var req podcastRequest
	if !h.radioBody(w, r, &req) {
		return
	}
	v, err := h.Radio.UpdatePodcast(r.Context(), pathVar(r, "id"), radio.Podcast{URL: req.URL, Name: req.Name})
	if err != nil {
		h.fail(w, r, answer.Failed("the podcast could not be changed", err))
		return
	}
	answer.JSON(w, http.StatusOK, v)
}

func (h *handler) deletePodcast(w http.ResponseWriter, r *http.Request) {
	if err := h.Radio.DeletePodcast(pathVar(r, "id")); err != nil {
		h.fail(w, r, answer.Failed("the podcast could not be removed", err))
		return
	}
	answer.JSON(w, http.StatusOK, map[string]bool{"deleted": true})
}

func (h *handler) refreshPodcast(w http.ResponseWriter, r *http.Request) {
	v, err := h.Radio.RefreshPodcast(r.Context(), pathVar(r, "id"))
	if err != nil {
		h.fail(w, r, answer.Failed("the feed could not be refreshed", err))
		return
	}
	answer.JSON(w, http.StatusOK, v)
}

// radioBody reads a JSON body into dst, answering the error itself.
func (h *handler) radioBody(w http.ResponseWriter, r *http.Request, dst any) bool {
	if err := jsonBody.Decode(r, dst); err != nil {
		h.fail(w, r, err)
		return false
	}
	return true
}
