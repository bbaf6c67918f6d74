// Package hhlink is the household of boxes as playerd sees it: syncd (the
// sync service that runs Syncthing) over its Unix socket, and the parents'
// consent on both boxes before two boxes share anything.
//
// Consent is a request and an accept: a parent picks a box found on the
// home network in this box's admin page (Add); this box adds it to its
// Syncthing and sends it a join request (POST /api/household/requests,
// which needs no login because it only asks); the other box lists the
// request in its admin page until a parent there accepts it (Accept),
// which adds this box on that side. Syncthing connects only boxes that
// both added each other (each knows the other's device id, the hash of
// its certificate), so nothing is shared before both parents agreed. A
// box on the network that was not added gets nothing and can push
// nothing, and removing a box (Remove) takes it out of Syncthing's
// configuration at once.
package hhlink

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/storybox/storybox/services/internal/daemon"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/internal/syncapi"
)

// ErrUnavailable wraps every failure to reach syncd.
var ErrUnavailable = fault.New(fault.Unavailable, "household service unavailable").Coded("household_unavailable")

// Request is a join request this box received and a parent has not yet
// accepted or declined.
type Request struct {
	DeviceID string `json:"device_id"`
	Name     string `json:"name"`
	// Address is where the asking box's Syncthing listens: the address
	// the request came from, with the port it named.
	Address  string    `json:"address"`
	Received time.Time `json:"received"`
}

// JoinRequest is the body of POST /api/household/requests, sent from one
// box to another.
type JoinRequest struct {
	DeviceID string `json:"device_id"`
	Name     string `json:"name"`
	// Port is where the asking box's Syncthing listens.
	Port int `json:"port"`
}

// View is GET /api/admin/household.
type View struct {
	syncapi.Status
	Found    []syncapi.FoundBox `json:"found"`
	Requests []Request          `json:"requests"`
	// DiskFull: a shared folder stopped because this box's disk is full
	// (Syncthing keeps a reserve and refuses to fill it).
	DiskFull bool `json:"disk_full"`
}

// Limits of the requests kept: a box on the network cannot fill the
// page or the memory with them.
const (
	MaxRequests = 8
	RequestTTL  = time.Hour
)

// Link is safe for concurrent use.
type Link struct {
	d        *daemon.Client
	name     string
	onChange func()
	http     *http.Client
	now      func() time.Time

	mu       sync.Mutex
	requests []Request
}

// Config is what New needs.
type Config struct {
	// Socket is syncd's.
	Socket string
	// Name is this box's name as the other boxes show it.
	Name string
	// OnChange tells the change feed that the household changed.
	OnChange func()
	// HTTP sends join requests to other boxes; nil: a client with a
	// 10 s timeout.
	HTTP *http.Client
	Now  func() time.Time
}

// New returns the link to syncd at cfg.Socket.
func New(cfg Config) *Link {
	l := &Link{d: daemon.NewClient(cfg.Socket, "syncd", ErrUnavailable.Msg), name: cfg.Name, onChange: cfg.OnChange, http: cfg.HTTP, now: cfg.Now}
	if l.http == nil {
		l.http = &http.Client{Timeout: 10 * time.Second}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.onChange == nil {
		l.onChange = func() {}
	}
	return l
}

// quick bounds a call to syncd; syncd bounds what it asks Syncthing for a
// status well below it.
const quick = 10 * time.Second

func (l *Link) call(ctx context.Context, method, path string, in, out any) error {
	ctx, cancel := context.WithTimeout(ctx, quick)
	defer cancel()
	return l.d.Call(ctx, method, path, in, out)
}

// Status is syncd's view of the household.
func (l *Link) Status(ctx context.Context) (syncapi.Status, error) {
	var st syncapi.Status
	return st, l.call(ctx, http.MethodGet, "/status", nil, &st)
}

// View is the household for the admin page.
func (l *Link) View(ctx context.Context) (View, error) {
	st, err := l.Status(ctx)
	if err != nil {
		return View{}, err
	}
	var found syncapi.Found
	if err := l.call(ctx, http.MethodGet, "/found", nil, &found); err != nil {
		return View{}, err
	}
	v := View{Status: st, Found: found.Boxes, Requests: l.pending()}
	for _, f := range st.Folders {
		if diskFull(f.Error) {
			v.DiskFull = true
		}
	}
	return v, nil
}

// diskFull recognises Syncthing's words for a full disk (v1.30.0's
// lib/model: "insufficient space", and the folder's own check of its
// free-space reserve, "free space … is below the minimum"), and the
// kernel's ENOSPC.
func diskFull(msg string) bool {
	m := strings.ToLower(msg)
	return strings.Contains(m, "insufficient space") || strings.Contains(m, "no space left") ||
		(strings.Contains(m, "free space") && strings.Contains(m, "minimum"))
}

func (l *Link) pending() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expire()
	out := slices.Clone(l.requests)
	if out == nil {
		out = []Request{}
	}
	return out
}

// expire drops requests past RequestTTL; l.mu held.
func (l *Link) expire() {
	now := l.now()
	l.requests = slices.DeleteFunc(l.requests, func(r Request) bool { return now.Sub(r.Received) > RequestTTL })
}

var (
	errNotFound  = fault.New(fault.NotFound, "no such box on the home network").Coded("household_not_found")
	errNoRequest = fault.New(fault.NotFound, "no request from that box").Coded("household_no_request")
	errNoAnswer  = fault.New(fault.Upstream, "the other box did not take the request").Coded("household_no_answer")
)

// Add adds a box found on the home network, by its device id, and sends
// it the request to join; the other box's parent accepts it there. When
// the other box cannot be reached the box is not added.
func (l *Link) Add(ctx context.Context, deviceID string) (View, error) {
	var found syncapi.Found
	if err := l.call(ctx, http.MethodGet, "/found", nil, &found); err != nil {
		return View{}, err
	}
	i := slices.IndexFunc(found.Boxes, func(f syncapi.FoundBox) bool { return f.DeviceID == deviceID })
	if i < 0 {
		return View{}, errNotFound
	}
	f := found.Boxes[i]
	self, err := l.Status(ctx)
	if err != nil {
		return View{}, err
	}
	if err := l.call(ctx, http.MethodPost, "/boxes", syncapi.AddBox{DeviceID: f.DeviceID, Name: f.Name, Address: f.Address}, nil); err != nil {
		return View{}, err
	}
	if err := l.ask(ctx, f, JoinRequest{DeviceID: self.DeviceID, Name: l.name, Port: self.Port}); err != nil {
		// Not half a pairing: a box that never heard of the request is
		// not kept here either.
		_ = l.call(context.WithoutCancel(ctx), http.MethodDelete, "/boxes/"+url.PathEscape(f.DeviceID), nil, nil)
		return View{}, err
	}
	l.dropRequest(f.DeviceID) // it had asked us first: this is the accept
	l.onChange()
	return l.View(ctx)
}

// ask sends the join request to the box f.
func (l *Link) ask(ctx context.Context, f syncapi.FoundBox, req JoinRequest) error {
	host := strings.TrimPrefix(f.Address, "tcp://")
	h, _, err := net.SplitHostPort(host)
	if err != nil {
		return fault.Wrap(fault.Invalid, err, "box address")
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	u := "http://" + net.JoinHostPort(h, strconv.Itoa(f.APIPort)) + "/api/household/requests"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hr.Header.Set("Content-Type", "application/json")
	resp, err := l.http.Do(hr)
	if err != nil {
		return fault.Wrap(fault.Upstream, err, errNoAnswer.Msg).(*fault.Error).Coded(errNoAnswer.Code)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fault.New(fault.Upstream, "%s: %s", errNoAnswer.Msg, resp.Status).Coded(errNoAnswer.Code)
	}
	return nil
}

// Receive keeps a join request from the box at remote (the request's
// source address). A box already in the household is answered at once
// (its parent added this box after this box added it).
func (l *Link) Receive(ctx context.Context, req JoinRequest, remote string) error {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	if err := checkJoin(req); err != nil {
		return err
	}
	st, err := l.Status(ctx)
	if err != nil {
		return err
	}
	if req.DeviceID == st.DeviceID {
		return fault.New(fault.Invalid, "that is this box itself").Coded("household_self")
	}
	addr := "tcp://" + net.JoinHostPort(host, strconv.Itoa(req.Port))
	for _, b := range st.Boxes {
		if b.DeviceID == req.DeviceID {
			if b.Address != addr {
				// It moved (a new lease): follow it.
				_ = l.call(ctx, http.MethodPost, "/boxes", syncapi.AddBox{DeviceID: b.DeviceID, Name: b.Name, Address: addr}, nil)
			}
			return nil
		}
	}
	l.mu.Lock()
	l.expire()
	l.requests = slices.DeleteFunc(l.requests, func(r Request) bool { return r.DeviceID == req.DeviceID })
	if len(l.requests) >= MaxRequests {
		l.mu.Unlock()
		return fault.Retry(fault.Busy, time.Minute, "too many requests to join are waiting; a parent must answer them first").Coded("household_requests_full")
	}
	l.requests = append(l.requests, Request{DeviceID: req.DeviceID, Name: req.Name, Address: addr, Received: l.now()})
	l.mu.Unlock()
	l.onChange()
	return nil
}

func checkJoin(req JoinRequest) error {
	if len(req.DeviceID) != 63 || strings.Count(req.DeviceID, "-") != 7 || strings.IndexFunc(req.DeviceID, func(r rune) bool {
		return r != '-' && !(r >= 'A' && r <= 'Z') && !(r >= '2' && r <= '7')
	}) >= 0 {
		return fault.New(fault.Invalid, "device id %q: want Syncthing's form", req.DeviceID).Coded("household_bad_device")
	}
	if req.Name == "" || len(req.Name) > 63 || strings.IndexFunc(req.Name, unicode.IsControl) >= 0 {
		return fault.New(fault.Invalid, "box name: want 1 to 63 bytes without control characters").Coded("household_bad_name")
	}
	if req.Port < 1 || req.Port > 65535 {
		return fault.New(fault.Invalid, "port %d: want 1–65535", req.Port).Coded("household_bad_address")
	}
	return nil
}

// Accept adds the box that asked to join.
func (l *Link) Accept(ctx context.Context, deviceID string) (View, error) {
	l.mu.Lock()
	l.expire()
	i := slices.IndexFunc(l.requests, func(r Request) bool { return r.DeviceID == deviceID })
	var r Request
	if i >= 0 {
		r = l.requests[i]
	}
	l.mu.Unlock()
	if i < 0 {
		return View{}, errNoRequest
	}
	if err := l.call(ctx, http.MethodPost, "/boxes", syncapi.AddBox{DeviceID: r.DeviceID, Name: r.Name, Address: r.Address}, nil); err != nil {
		return View{}, err
	}
	l.dropRequest(deviceID)
	l.onChange()
	return l.View(ctx)
}

// Decline forgets a request.
func (l *Link) Decline(deviceID string) error {
	if !l.dropRequest(deviceID) {
		return errNoRequest
	}
	l.onChange()
	return nil
}

func (l *Link) dropRequest(deviceID string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.requests)
	l.requests = slices.DeleteFunc(l.requests, func(r Request) bool { return r.DeviceID == deviceID })
	return len(l.requests) < n
}

// Remove takes a box out of the household; it loses access at once.
func (l *Link) Remove(ctx context.Context, deviceID string) (View, error) {
	if err := l.call(ctx, http.MethodDelete, "/boxes/"+url.PathEscape(deviceID), nil, nil); err != nil {
		return View{}, err
	}
	l.onChange()
	return l.View(ctx)
}

// SetMedia chooses the shared media folders.
func (l *Link) SetMedia(ctx context.Context, m syncapi.Media) (View, error) {
	if m.Folders == nil {
		m.Folders = []string{}
	}
	if err := l.call(ctx, http.MethodPut, "/media", m, nil); err != nil {
		return View{}, err
	}
	l.onChange()
	return l.View(ctx)
}
