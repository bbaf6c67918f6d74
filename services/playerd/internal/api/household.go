package api

import (
	"context"
	"net/http"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/playerd/internal/hhlink"
)

// HouseholdAdmin is the household of boxes (hhlink.Link): the parent's
// side under /api/admin/household, and the join request another box
// sends.
type HouseholdAdmin interface {
	View(ctx context.Context) (hhlink.View, error)
	Add(ctx context.Context, deviceID string) (hhlink.View, error)
	Accept(ctx context.Context, deviceID string) (hhlink.View, error)
	Decline(deviceID string) error
	Remove(ctx context.Context, deviceID string) (hhlink.View, error)
	SetMedia(ctx context.Context, m syncapi.Media) (hhlink.View, error)
	Receive(ctx context.Context, req hhlink.JoinRequest, remote string) error
}

var errNoHousehold = fault.New(fault.Unavailable, "the household service is not configured").Coded("household_off")

type householdBox struct {
	DeviceID string `json:"device_id"`
}

func (h *handler) householdView(w http.ResponseWriter, r *http.Request) {
	v, err := h.Household.View(r.Context())
	h.surface.Answer(w, r, v, err)
}

// householdAdd adds a box found on the home network and asks it to join.
func (h *handler) householdAdd(w http.ResponseWriter, r *http.Request) {
	var req householdBox
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.Household.Add(r.Context(), req.DeviceID)
	if err == nil {
		h.log.Info("household: box added, join request sent", "device_id", req.DeviceID)
	}
	h.surface.Answer(w, r, v, err)
}

func (h *handler) householdRemove(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "device_id")
	v, err := h.Household.Remove(r.Context(), id)
	if err == nil {
		h.log.Info("household: box removed", "device_id", id)
	}
	h.surface.Answer(w, r, v, err)
}

func (h *handler) householdAccept(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "device_id")
	v, err := h.Household.Accept(r.Context(), id)
	if err == nil {
		h.log.Info("household: join request accepted", "device_id", id)
	}
	h.surface.Answer(w, r, v, err)
}

func (h *handler) householdDecline(w http.ResponseWriter, r *http.Request) {
	err := h.Household.Decline(pathVar(r, "device_id"))
	h.surface.Answer(w, r, map[string]bool{"declined": true}, err)
}

func (h *handler) householdMedia(w http.ResponseWriter, r *http.Request) {
	var req syncapi.Media
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	v, err := h.Household.SetMedia(r.Context(), req)
	h.surface.Answer(w, r, v, err)
}

// householdRequest is another box asking to join: open, since it only
// asks; a parent accepts or declines it in the admin page.
func (h *handler) householdRequest(w http.ResponseWriter, r *http.Request) {
	var req hhlink.JoinRequest
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	err := h.Household.Receive(r.Context(), req, r.RemoteAddr)
	h.surface.Answer(w, r, map[string]bool{"received": true}, err)
}
