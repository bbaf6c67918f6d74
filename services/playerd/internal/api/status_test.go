package api

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"sync"
	"testing"

	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// setPlayer answers with whatever status the test set.
type setPlayer struct {
	mu sync.Mutex
	st player.Status
}

func (p *setPlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *setPlayer) set(st player.Status) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.st = st
}

func (p *setPlayer) Do(context.Context, player.Command) (player.Status, error) {
	return p.Status(), nil
}

// statusHandler is the API over a setPlayer, and a setter of the
// restrictions it shows (and with them the scan's progress).
func statusHandler(t *testing.T) (*setPlayer, func(rules.Restrictions), http.Handler) {
	p := &setPlayer{}
	var mu sync.Mutex
	var restr rules.Restrictions
	d := Deps{Version: "test", Player: p, Views: Views{Restrictions: func() rules.Restrictions {
		mu.Lock()
		defer mu.Unlock()
		return restr
	}, Scan: func() library.Progress {
		mu.Lock()
		defer mu.Unlock()
		return library.Progress{Scanning: restr.LockedFolders > 0, Done: restr.LockedFolders * 7, Total: 100}
	}}}
	d.Auth, d.Hosts = testAuth(t)
	setRestr := func(r rules.Restrictions) { mu.Lock(); restr = r; mu.Unlock() }
	return p, setRestr, NewHandler(d)
}

// statusServer is statusHandler with a GET /api/status that returns the body.
func statusServer(t *testing.T) (*setPlayer, func(rules.Restrictions), func() []byte) {
	p, setRestr, srv := statusHandler(t)
	get := func() []byte {
		t.Helper()
		req := httptest.NewRequest("GET", "/api/status", nil)
		req.Host = "box:8090"
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		if rec.Code != 200 || rec.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET /api/status: %d %q", rec.Code, rec.Header().Get("Content-Type"))
		}
		if n := rec.Header().Get("Content-Length"); n != "" && n != fmt.Sprint(rec.Body.Len()) {
			t.Fatalf("Content-Length %s for %d bytes", n, rec.Body.Len())
		}
		return rec.Body.Bytes()
	}
	return p, setRestr, get
}

// TestStatusLength: over a real connection the status comes with its
// length, short or long (a long queue), never chunked.
func TestStatusLength(t *testing.T) {
	p, _, h := statusHandler(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, items := range []int{0, 2, 200} {
		st := baseStatus()
		st.Queue = nil
		for i := range items {
			st.Queue = append(st.Queue, player.QueueItem{ID: fmt.Sprint(i), Title: "Kapitel mit einem langen Titel", Provider: "local"})
		}
		if st.Queue == nil {
			st.Queue = []player.QueueItem{}
		}
		p.set(st)
		req, _ := http.NewRequest("GET", srv.URL+"/api/status", nil)
		req.Host = "box:8090"
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) > 0 {
			t.Errorf("%d items: length %d, transfer encoding %v for %d bytes", items, resp.ContentLength, resp.TransferEncoding, len(body))
		}
		if want := encoded(t, st, rules.Restrictions{}); !bytes.Equal(body, want) {
			t.Errorf("%d items: got %s, want %s", items, body, want)
		}
	}
}

// encoded is the answer as the status was always encoded: statusBody
// through encoding/json, with the restrictions and scan statusHandler shows.
func encoded(t *testing.T, st player.Status, r rules.Restrictions) []byte {
	t.Helper()
	var b bytes.Buffer
	scan := library.Progress{Scanning: r.LockedFolders > 0, Done: r.LockedFolders * 7, Total: 100}
	if err := json.NewEncoder(&b).Encode(statusBody{Status: st, Restrictions: r, Library: scan}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func str(s string) *string { return &s }

func baseStatus() player.Status {
	q := []player.QueueItem{{ID: "a", Title: "Eins", Duration: 3, Provider: "local", ResumePolicy: "position"},
		{ID: "b", Title: `Zwei "position":1,`, Artist: "X", Duration: 4.5, Provider: "local", ResumePolicy: "position"}}
	return player.Status{State: player.Playing, Backend: "storybox", FolderID: str("f1"), Folder: str("Folge A"),
		Cover: str("/api/cover/f1"), Queue: q, Index: 1, Position: 1.25, Duration: 4.5, Volume: 30, MaxVolume: 70,
		Normalize: &player.Normalization{Mode: "folder", By: "folder", GainDB: -3.25}}
}

// TestStatusCacheFollowsEveryField: after any one field of the status
// changes, GET /api/status answers what encoding the new status gives. The
// fields are walked by reflection, so a field added to player.Status later
// is covered (or fails here until player.SamePlayback compares it).
func TestStatusCacheFollowsEveryField(t *testing.T) {
	p, _, get := statusServer(t)
	none := rules.Restrictions{}
	typ := reflect.TypeOf(player.Status{})
	for i := range typ.NumField() {
		f := typ.Field(i)
		for variant := range 3 {
			base := baseStatus()
			p.set(base)
			if got, want := get(), encoded(t, base, none); !bytes.Equal(got, want) {
				t.Fatalf("base: got %s want %s", got, want)
			}
			changed := base
			if !change(reflect.ValueOf(&changed).Elem().Field(i), variant) {
				continue
			}
			p.set(changed)
			if got, want := get(), encoded(t, changed, none); !bytes.Equal(got, want) {
				t.Errorf("%s changed (variant %d):\n got  %s\n want %s", f.Name, variant, got, want)
			}
		}
	}
}

// change gives v another value; variants try the kinds of change a field
// of its type can have. It reports false when a variant does not apply.
func change(v reflect.Value, variant int) bool {
	switch v.Kind() {
	case reflect.String:
		v.SetString(v.String() + []string{"x", `"`, "ü"}[variant])
	case reflect.Bool:
		if variant > 0 {
			return false
		}
		v.SetBool(!v.Bool())
	case reflect.Int:
		v.SetInt(v.Int() + int64(variant) + 1)
	case reflect.Uint64:
		v.SetUint(v.Uint() + uint64(variant) + 1)
	case reflect.Float64:
		v.SetFloat([]float64{v.Float() + 1, 1.0 / 3, 0}[variant])
	case reflect.Pointer:
		if n, ok := v.Interface().(*player.Normalization); ok || v.Type() == reflect.TypeOf(n) {
			// another gain, the same normalisation elsewhere, none
			switch {
			case variant == 0:
				lufs := -9.5
				v.Set(reflect.ValueOf(&player.Normalization{Mode: "track", By: "track", GainDB: -8.5, LUFS: &lufs}))
			case variant == 1 && n != nil:
				c := *n
				v.Set(reflect.ValueOf(&c))
			case variant == 2 && n != nil:
				v.Set(reflect.Zero(v.Type()))
			default:
				return false
			}
			return true
		}
		if w, ok := v.Interface().(*player.Waiting); ok { // another folder, the same elsewhere, none
			switch {
			case variant == 0:
				v.Set(reflect.ValueOf(&player.Waiting{FolderID: "w", Folder: "Wartet"}))
			case w == nil:
				return false
			case variant == 1:
				same := *w
				v.Set(reflect.ValueOf(&same))
			default:
				v.Set(reflect.Zero(v.Type()))
			}
			return true
		}
		// *string: another text, the same text elsewhere, none
		switch variant {
		case 0:
			s := "anders"
			if !v.IsNil() {
				s = v.Elem().String() + "!"
			}
			v.Set(reflect.ValueOf(&s))
		case 1:
			if v.IsNil() {
				return false
			}
			s := v.Elem().String()
			v.Set(reflect.ValueOf(&s))
		case 2:
			if v.IsNil() {
				s := "neu"
				v.Set(reflect.ValueOf(&s))
			} else {
				v.Set(reflect.Zero(v.Type()))
			}
		}
	case reflect.Slice: // the queue: an item changed in a new copy, one more, none
		q := v.Interface().([]player.QueueItem)
		switch variant {
		case 0:
			q = append([]player.QueueItem(nil), q...)
			q[1].Title += " (neu)"
		case 1:
			q = append(append([]player.QueueItem(nil), q...), player.QueueItem{ID: "c", Title: "Drei"})
		case 2:
			q = []player.QueueItem{}
		}
		v.Set(reflect.ValueOf(q))
	default:
		panic(fmt.Sprintf("change: a status field of kind %s; teach the test (and player.SamePlayback) about it", v.Kind()))
	}
	return true
}

// TestStatusCacheRandom: random walks through statuses, positions of every
// size and restrictions give the same answers as encoding each anew.
func TestStatusCacheRandom(t *testing.T) {
	p, setRestr, get := statusServer(t)
	rnd := rand.New(rand.NewPCG(21, 1))
	positions := []float64{0, 1e-7, 1e-6, 0.5, 1.0 / 3, 83.4, 3599.999, 1e20, 1e21, 1e22, -1, math.SmallestNonzeroFloat64}
	mins := 15
	left := 600
	restrs := []rules.Restrictions{{Clock: "set"}, {Clock: "estimated", LockedFolders: 2},
		{Clock: "set", SleepTimer: &rules.SleepState{Until: "time", Minutes: &mins, LeftSeconds: &left}}}
	st := baseStatus()
	for i := range 2000 {
		switch rnd.IntN(6) {
		case 0:
			st.Position = positions[rnd.IntN(len(positions))]
		case 1:
			st.Position += rnd.Float64()
		case 2:
			st.State = []player.State{player.Playing, player.Paused, player.Stopped}[rnd.IntN(3)]
		case 3:
			st.Live = !st.Live
		case 4:
			st.Index = rnd.IntN(3) - 1
		case 5:
			st.Volume = rnd.IntN(70)
		}
		p.set(st)
		r := restrs[rnd.IntN(len(restrs))]
		setRestr(r)
		if got, want := get(), encoded(t, st, r); !bytes.Equal(got, want) {
			t.Fatalf("step %d:\n got  %s\n want %s", i, got, want)
		}
	}
}
