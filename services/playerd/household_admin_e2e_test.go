package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/internal/syncapi"
	"github.com/storybox/storybox/services/playerd/internal/hhlink"
)

// Device ids in Syncthing's form for the stand-in households.
const (
	selfDevice  = "AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA-AAAAAAA"
	grandmaBox  = "BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB-BBBBBBB"
	cousinBox   = "CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC-CCCCCCC"
	neighborBox = "DDDDDDD-DDDDDDD-DDDDDDD-DDDDDDD-DDDDDDD-DDDDDDD-DDDDDDD-DDDDDDD"
)

// fakeSyncd serves syncd's socket with a household in memory: the box
// alone, and one box (neighborBox) found on the network whose API is
// answered by a stand-in that takes join requests (asked counts them).
// The real syncd is tested with Syncthing in services/syncd.
func fakeSyncd(t *testing.T) (sock string, asked func() int) {
	t.Helper()
	var (
		mu       sync.Mutex
		boxes    []syncapi.Box
		media    = syncapi.Media{All: true, Folders: []string{}}
		requests int
	)
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		if r.Method != http.MethodPost || r.URL.Path != "/api/household/requests" || json.NewDecoder(r.Body).Decode(&req) != nil || req["device_id"] != selfDevice {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"received":true}`))
	}))
	t.Cleanup(other.Close)
	_, p, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	apiPort, _ := strconv.Atoi(p)

	dir, err := os.MkdirTemp("", "syncd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "syncd.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	reply := func(w http.ResponseWriter, code int, v any) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(v)
	}
	status := func() syncapi.Status {
		st := syncapi.Status{DeviceID: selfDevice, Port: 22000, State: syncapi.StateAlone, Boxes: slices.Clone(boxes), Folders: []syncapi.Folder{}, Media: media}
		if st.Boxes == nil {
			st.Boxes = []syncapi.Box{}
		}
		if len(boxes) > 0 {
			st.State = syncapi.StateRunning
			st.Folders = []syncapi.Folder{{ID: syncapi.HouseholdFolder, Path: "/x", State: "idle", Completion: 100},
				{ID: syncapi.MediaFolder, Path: "/m", State: "idle", Completion: 100, Error: "insufficient space on disk"}}
		}
		return st
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reply(w, 200, status())
	})
	mux.HandleFunc("GET /found", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		in := slices.ContainsFunc(boxes, func(b syncapi.Box) bool { return b.DeviceID == neighborBox })
		reply(w, 200, syncapi.Found{Boxes: []syncapi.FoundBox{{Name: "nachbar", DeviceID: neighborBox, Address: "tcp://127.0.0.1:22000", APIPort: apiPort, InHousehold: in}}})
	})
	mux.HandleFunc("POST /boxes", func(w http.ResponseWriter, r *http.Request) {
		var req syncapi.AddBox
		if json.NewDecoder(r.Body).Decode(&req) != nil || len(req.DeviceID) != 63 {
			reply(w, 400, syncapi.Error{Error: "device id", Kind: "invalid", Code: "household_bad_device"})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		boxes = slices.DeleteFunc(boxes, func(b syncapi.Box) bool { return b.DeviceID == req.DeviceID })
		boxes = append(boxes, syncapi.Box{DeviceID: req.DeviceID, Name: req.Name, Address: req.Address})
		reply(w, 200, status())
	})
	mux.HandleFunc("DELETE /boxes/{id}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		n := len(boxes)
		boxes = slices.DeleteFunc(boxes, func(b syncapi.Box) bool { return b.DeviceID == r.PathValue("id") })
		if len(boxes) == n {
			reply(w, 404, syncapi.Error{Error: "no box", Kind: "not found", Code: "household_no_box"})
			return
		}
		reply(w, 200, status())
	})
	mux.HandleFunc("PUT /media", func(w http.ResponseWriter, r *http.Request) {
		var req syncapi.Media
		if json.NewDecoder(r.Body).Decode(&req) != nil || slices.ContainsFunc(req.Folders, func(f string) bool { return strings.Contains(f, "/") }) {
			reply(w, 400, syncapi.Error{Error: "folder", Kind: "invalid", Code: "household_bad_folder"})
			return
		}
		mu.Lock()
		defer mu.Unlock()
		media = req
		reply(w, 200, media)
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // nothing ever changes on its own here
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Close() })
	return sock, func() int {
		mu.Lock()
		defer mu.Unlock()
		return requests
	}
}

// TestHouseholdAdmin: the household through the admin API with syncd
// standing in: a box alone; a join request from another box waits for the
// parent, who accepts it; adding a box found on the network sends it the
// request; bad input is refused with its code and changes nothing; a full
// disk is reported; the routes need a session once a password is set,
// except the join request, which only asks.
func TestHouseholdAdmin(t *testing.T) {
	media := mediaLibrary(t, map[string][]float64{"Hoerspiele/Folge A": {1}})
	sock, asked := fakeSyncd(t)
	base, stop := startBoxWith(t, media, t.TempDir(), func(c *setup) { c.Sync = sock })
	defer stop()
	admin := &caller{t: t, base: base, hc: http.DefaultClient}

	h := admin.ok("GET", "/api/admin/household", "").body
	if h["state"] != "alone" || h["device_id"] != selfDevice || len(h["boxes"].([]any)) != 0 || h["disk_full"] != false {
		t.Fatalf("alone: %v", h)
	}
	if f := h["found"].([]any); len(f) != 1 || f[0].(map[string]any)["device_id"] != neighborBox {
		t.Fatalf("found: %v", h["found"])
	}

	// Another box asks; nothing is shared until the parent accepts.
	admin.ok("POST", "/api/household/requests", `{"device_id":"`+grandmaBox+`","name":"oma","port":22000}`)
	h = admin.ok("GET", "/api/admin/household", "").body
	reqs := h["requests"].([]any)
	if len(reqs) != 1 || len(h["boxes"].([]any)) != 0 {
		t.Fatalf("after the request: %v", h)
	}
	if addr := reqs[0].(map[string]any)["address"]; addr != "tcp://127.0.0.1:22000" {
		t.Errorf("the request's address %v: want its source address", addr)
	}
	h = admin.ok("POST", "/api/admin/household/requests/"+grandmaBox+"/accept", "").body
	if b := h["boxes"].([]any); len(b) != 1 || b[0].(map[string]any)["name"] != "oma" || len(h["requests"].([]any)) != 0 {
		t.Fatalf("after accepting: %v", h)
	}
	if h["disk_full"] != true {
		t.Errorf("syncd's folder error 'insufficient space' is not reported as a full disk: %v", h["folders"])
	}

	// Adding a found box sends it the join request.
	h = admin.ok("POST", "/api/admin/household/boxes", `{"device_id":"`+neighborBox+`"}`).body
	if asked() != 1 || len(h["boxes"].([]any)) != 2 {
		t.Fatalf("after adding the neighbour: asked %d, %v", asked(), h["boxes"])
	}

	for _, c := range []struct{ method, path, body, code string }{
		{"POST", "/api/admin/household/boxes", `{"device_id":"` + cousinBox + `"}`, "household_not_found"},
		{"POST", "/api/admin/household/requests/" + cousinBox + "/accept", "", "household_no_request"},
		{"DELETE", "/api/admin/household/requests/" + cousinBox, "", "household_no_request"},
		{"DELETE", "/api/admin/household/boxes/" + cousinBox, "", "household_no_box"},
		{"PUT", "/api/admin/household/media", `{"all":false,"folders":["a/b"]}`, "household_bad_folder"},
		{"POST", "/api/household/requests", `{"device_id":"nope","name":"x","port":22000}`, "household_bad_device"},
		{"POST", "/api/household/requests", `{"device_id":"` + selfDevice + `","name":"x","port":22000}`, "household_self"},
		{"POST", "/api/household/requests", `{"device_id":"` + cousinBox + `","name":"","port":22000}`, "household_bad_name"},
		{"POST", "/api/household/requests", `{"device_id":"` + cousinBox + `","name":"x","port":0}`, "household_bad_address"},
	} {
		r := admin.send(c.method, c.path, []byte(c.body))
		if r.code < 400 || r.body["code"] != c.code {
			t.Errorf("%s %s %s: %d %s, want code %s", c.method, c.path, c.body, r.code, r.raw, c.code)
		}
	}
	if h := admin.ok("GET", "/api/admin/household", "").body; len(h["boxes"].([]any)) != 2 || len(h["requests"].([]any)) != 0 {
		t.Fatalf("refusals changed the household: %v", h)
	}
	h = admin.ok("DELETE", "/api/admin/household/boxes/"+grandmaBox, "").body
	if len(h["boxes"].([]any)) != 1 {
		t.Fatalf("after removing: %v", h["boxes"])
	}

	// With a password the admin routes need a session; the join request
	// does not.
	admin.ok("PUT", "/api/admin/password", `{"new_password":"correct horse battery"}`)
	anon := &caller{t: t, base: base, hc: http.DefaultClient}
	if r := anon.send("GET", "/api/admin/household", nil); r.code != http.StatusUnauthorized {
		t.Errorf("household without a session: %d", r.code)
	}
	anon.ok("POST", "/api/household/requests", `{"device_id":"`+cousinBox+`","name":"vetter","port":22000}`)

	// At most MaxRequests wait: a box on the network cannot fill the page.
	for i := 1; i < hhlink.MaxRequests; i++ {
		id := strings.Repeat(string(rune('E'+i)), 7)
		anon.ok("POST", "/api/household/requests", `{"device_id":"`+strings.Repeat(id+"-", 7)+id+`","name":"x","port":22000}`)
	}
	r := anon.send("POST", "/api/household/requests", []byte(`{"device_id":"`+strings.Repeat("ZZZZZZZ-", 7)+`ZZZZZZZ","name":"x","port":22000}`))
	if r.code != http.StatusTooManyRequests || r.body["code"] != "household_requests_full" {
		t.Errorf("a request beyond the limit: %d %s", r.code, r.raw)
	}
}
