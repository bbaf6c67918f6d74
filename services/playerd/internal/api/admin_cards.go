package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/storybox/storybox/services/internal/answer"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/cards"
	"github.com/storybox/storybox/services/playerd/internal/wiring"
)

// CardsAdmin is the card mappings, teach mode and the cards seen.
type CardsAdmin interface {
	Doc() cards.Doc
	Replace(cards.Doc) error
	Put(id string, m cards.Mapping) (cards.Mapping, error)
	Delete(id string) error
	Unknown() []cards.Unknown
	ForgetUnknown(id string) error
	Recent() []cards.Read
	StartLearn(timeout time.Duration) (cards.Learn, error)
	Learning(ctx context.Context, wait time.Duration) cards.Learn
	StopLearn() cards.Learn
}

// InputAdmin is the input wiring (readers, media keys, GPIO buttons) and
// what the inputs found connected: the core's (wiring.Store), which the
// readers and buttons follow and report to.
type InputAdmin interface {
	Get() wiring.Wiring
	Put(wiring.Wiring) error
	Status() wiring.Status
}

func (h *handler) getCards(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Cards.Doc())
}

// putCards is PUT /api/admin/cards: fields left out keep their values,
// "cards" replaces all mappings. Checked and saved as a whole or refused.
func (h *handler) putCards(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Version  *int                      `json:"version"`
		SameCard *string                   `json:"same_card"`
		Sounds   *bool                     `json:"sounds"`
		Cards    *map[string]cards.Mapping `json:"cards"`
	}
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	d := h.Cards.Doc()
	if req.Version != nil {
		d.Version = *req.Version
	}
	if req.SameCard != nil {
		d.SameCard = *req.SameCard
	}
	if req.Sounds != nil {
		d.Sounds = *req.Sounds
	}
	if req.Cards != nil {
		d.Cards = *req.Cards
	}
	if err := h.Cards.Replace(d); err != nil {
		h.fail(w, r, answer.Failed("cards could not be saved", err))
		return
	}
	answer.JSON(w, http.StatusOK, h.Cards.Doc())
}

func (h *handler) putCard(w http.ResponseWriter, r *http.Request) {
	var m cards.Mapping
	if err := jsonBody.Decode(r, &m); err != nil {
		h.fail(w, r, err)
		return
	}
	id := pathVar(r, "id")
	saved, err := h.Cards.Put(id, m)
	if err != nil {
		h.fail(w, r, answer.Failed("card could not be saved", err))
		return
	}
	answer.JSON(w, http.StatusOK, saved.WithID(id))
}

func (h *handler) deleteCard(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "id")
	if err := h.Cards.Delete(id); err != nil {
		h.fail(w, r, answer.Failed("card could not be deleted", err))
		return
	}
	answer.JSON(w, http.StatusOK, map[string]any{"deleted": true, "id": id})
}

func (h *handler) unknownCards(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Cards.Unknown())
}

func (h *handler) forgetUnknownCard(w http.ResponseWriter, r *http.Request) {
	id := pathVar(r, "id")
	if err := h.Cards.ForgetUnknown(id); err != nil {
		h.fail(w, r, answer.Failed("unknown card could not be forgotten", err))
		return
	}
	answer.JSON(w, http.StatusOK, map[string]any{"deleted": true, "id": id})
}

func (h *handler) cardReads(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Cards.Recent())
}

// startLearn is POST /api/admin/cards/learn: the next card read is
// reported, not played.
func (h *handler) startLearn(w http.ResponseWriter, r *http.Request) {
	var req struct {
		TimeoutSeconds *int `json:"timeout_seconds"`
	}
	if err := jsonBody.Decode(r, &req); err != nil {
		h.fail(w, r, err)
		return
	}
	var timeout time.Duration
	if req.TimeoutSeconds != nil {
		if *req.TimeoutSeconds < 1 {
			h.fail(w, r, fault.New(fault.Invalid, "timeout_seconds must be 1..%d", int(cards.MaxLearnTimeout/time.Second)))
			return
		}
		timeout = time.Duration(min(*req.TimeoutSeconds, 1<<20)) * time.Second
	}
	l, err := h.Cards.StartLearn(timeout)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	answer.JSON(w, http.StatusOK, l)
}

// learning is GET /api/admin/cards/learn[?wait=S]: with wait, a request
// made while the box waits for a card returns when one is read, or after S
// seconds.
func (h *handler) learning(w http.ResponseWriter, r *http.Request) {
	var wait time.Duration
	if v := r.URL.Query().Get("wait"); v != "" {
		s, err := strconv.Atoi(v)
		maxWait := int(cards.MaxLearnWait / time.Second)
		if err != nil || s < 0 || s > maxWait {
			h.fail(w, r, fault.New(fault.Invalid, "wait must be 0..%d seconds", maxWait))
			return
		}
		wait = time.Duration(s) * time.Second
	}
	answer.JSON(w, http.StatusOK, h.Cards.Learning(r.Context(), wait))
}

func (h *handler) stopLearn(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, h.Cards.StopLearn())
}

// inputView is GET and PUT /api/admin/input.
type inputView struct {
	Wiring wiring.Wiring `json:"wiring"`
	Status wiring.Status `json:"status"`
}

func (h *handler) getInput(w http.ResponseWriter, r *http.Request) {
	answer.JSON(w, http.StatusOK, inputView{h.Input.Get(), h.Input.Status()})
}

// putInput is PUT /api/admin/input: the body has the wiring's shape;
// fields left out keep their values (objects merge field by field, lists
// are replaced). It takes effect at once.
func (h *handler) putInput(w http.ResponseWriter, r *http.Request) {
	wiring := h.Input.Get()
	if err := jsonBody.Decode(r, &wiring); err != nil {
		h.fail(w, r, err)
		return
	}
	if err := h.Input.Put(wiring); err != nil {
		h.fail(w, r, answer.Failed("input wiring could not be saved", err))
		return
	}
	answer.JSON(w, http.StatusOK, inputView{h.Input.Get(), h.Input.Status()})
}
