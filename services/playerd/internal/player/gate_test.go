package player

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
)

type ctxKey struct{}

// recGate records what it is asked and answers as told.
type recGate struct {
	mu      sync.Mutex
	asks    []Ask
	callers []any
	refuse  func(Ask) error
	cap     int
	commits []string
}

func (g *recGate) Admit(ctx context.Context, a Ask) (Verdict, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.asks = append(g.asks, a)
	g.callers = append(g.callers, ctx.Value(ctxKey{}))
	if g.refuse != nil {
		if err := g.refuse(a); err != nil {
			return Verdict{}, err
		}
	}
	return Verdict{MaxVolume: g.cap, Commit: func() {
		g.mu.Lock()
		g.commits = append(g.commits, a.Cmd.Action)
		g.mu.Unlock()
	}}, nil
}

func (g *recGate) set(f func(Ask) error, cap int) {
	g.mu.Lock()
	g.refuse, g.cap = f, cap
	g.mu.Unlock()
}

func (g *recGate) last() (Ask, any, []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.asks[len(g.asks)-1], g.callers[len(g.callers)-1], append([]string(nil), g.commits...)
}

var errNo = fault.New(fault.Forbidden, "no")

// Every command meets the gate in the player goroutine with the caller's
// context and the state it will act on; a refusal changes nothing, and
// only a command that succeeded is committed.
func TestGateJudgesEveryCommand(t *testing.T) {
	g := &recGate{}
	f := folderOf(t, "f", 5, 5)
	h := newHarness(t, catalog{"f": f}, Config{Gate: g}, &recSink{})
	ctx := context.WithValue(context.Background(), ctxKey{}, "the child")
	if _, err := h.p.Do(ctx, Command{Action: ActFolder, FolderID: "f"}); err != nil {
		t.Fatal(err)
	}
	a, caller, commits := g.last()
	if a.Cmd.Action != ActFolder || a.Playing || a.FolderID != "" || caller != "the child" || len(commits) != 1 {
		t.Errorf("folder: ask %+v caller %v commits %v", a, caller, commits)
	}
	h.do(Command{Action: ActPause})
	a, _, _ = g.last()
	if !a.Playing || a.FolderID != "f" {
		t.Errorf("pause was asked about %+v", a)
	}

	g.set(func(a Ask) error {
		if a.Cmd.Action == ActPlay {
			return errNo
		}
		return nil
	}, 0)
	before := h.p.Status()
	h.fails(Command{Action: ActPlay}, fault.Forbidden)
	if after := h.p.Status(); after.State != before.State || after.Position != before.Position {
		t.Errorf("a refused play changed the player: %+v", after)
	}
	_, _, commits = g.last()
	if len(commits) != 2 {
		t.Errorf("commits after the refusal: %v", commits)
	}
	// A malformed command is refused before the gate hears of it; one the
	// player cannot do is not committed.
	n := len(g.asks)
	h.fails(Command{Action: ActPlay, Value: val(1)}, fault.Invalid)
	if len(g.asks) != n {
		t.Error("the gate was asked about a malformed command")
	}
	empty := newHarness(t, catalog{}, Config{Gate: g}, &recSink{})
	empty.fails(Command{Action: ActNext}, fault.Conflict)
	if _, _, commits = g.last(); len(commits) != 2 {
		t.Errorf("a failed command was committed: %v", commits)
	}
}

// The gate's cap lowers a louder volume at once, holds every later volume
// and the announcements under it, and shows as max_volume; lifted, the
// volume stays where it was.
func TestGateCapsTheVolume(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &recGate{}
		sink := &recSink{perWrite: time.Millisecond}
		f := folderOf(t, "f", 5)
		h := newHarness(t, catalog{"f": f}, Config{Gate: g, MaxVolume: 90, AnnounceVolume: 80}, sink)
		h.do(Command{Action: ActVolume, Value: val(70)})
		h.do(Command{Action: ActFolder, FolderID: "f"})
		g.set(nil, 30)
		st := h.do(Command{Action: ActVolumeDelta, Value: val(0)})
		if st.Volume != 30 || st.MaxVolume != 30 {
			t.Fatalf("under the cap: %+v", st)
		}
		if st := h.do(Command{Action: ActVolume, Value: val(60)}); st.Volume != 30 {
			t.Errorf("volume above the cap: %d", st.Volume)
		}
		from := len(sink.heard())
		done, err := h.p.Announce(context.Background(), clipOf(4800, 0.5))
		if err != nil {
			t.Fatal(err)
		}
		<-done
		a, _, _ := g.last()
		if !a.Announce || a.Cmd.Action != "" {
			t.Errorf("the announcement was asked as %+v", a)
		}
		want := 0.5 * gainFor(30)
		loud := 0
		for _, fr := range sink.heard()[from:] {
			if fr[0] > want*1.01 {
				loud++
			}
		}
		if loud > 0 {
			t.Errorf("%d frames of the announcement above the cap's level %v", loud, want)
		}
		g.set(nil, 0)
		if st := h.do(Command{Action: ActVolumeDelta, Value: val(0)}); st.Volume != 30 || st.MaxVolume != 90 {
			t.Errorf("cap lifted: %+v", st)
		}
	})
}

func TestGateRefusesAnnouncements(t *testing.T) {
	g := &recGate{}
	g.set(func(a Ask) error {
		if a.Announce {
			return errNo
		}
		return nil
	}, 0)
	h := newHarness(t, catalog{}, Config{Gate: g}, &recSink{})
	if _, err := h.p.Announce(context.Background(), clipOf(480, 0.5)); !errors.Is(err, fault.Forbidden) {
		t.Errorf("announce: %v", err)
	}
	if st := h.p.Status(); st.Speaking {
		t.Error("a refused announcement plays")
	}
}

func TestSleepTimerCommand(t *testing.T) {
	h := newHarness(t, catalog{}, Config{}, &recSink{})
	h.fails(Command{Action: ActSleepTimer, Value: val(10)}, fault.Unavailable)
	g := &recGate{}
	h = newHarness(t, catalog{}, Config{Gate: g}, &recSink{})
	h.do(Command{Action: ActSleepTimer, Value: val(10)})
	h.do(Command{Action: ActSleepTimer, Until: UntilTrack})
	if _, _, commits := g.last(); len(commits) != 2 {
		t.Errorf("commits %v", commits)
	}
	for _, c := range []Command{
		{Action: ActSleepTimer},
		{Action: ActSleepTimer, Until: "album"},
		{Action: ActSleepTimer, Value: val(10), FolderID: "f"},
		{Action: ActVolume, Until: UntilTrack},
	} {
		h.fails(c, fault.Invalid)
	}
}

func TestCommandJSON(t *testing.T) {
	for _, c := range []struct{ in, out, err string }{
		{`{"action":"sleep_timer","value":"track"}`, `{"action":"sleep_timer","value":"track"}`, ""},
		{`{"action":"sleep_timer","value":15}`, `{"action":"sleep_timer","value":15}`, ""},
		{`{"action":"resume","folder_id":"f","item_index":2}`, `{"action":"resume","folder_id":"f","item_index":2}`, ""},
		{`{"action":"play","value":null}`, `{"action":"play"}`, ""},
		{`{"action":"play","valeu":1}`, "", `unknown field "valeu"`},
		{`{"action":"shuffle","value":true}`, `{"action":"shuffle","value":true}`, ""},
		{`{"action":"repeat","value":"track"}`, `{"action":"repeat","value":"track"}`, ""},
		{`{"action":"seek_delta","value":-10}`, `{"action":"seek_delta","value":-10}`, ""},
		{`{"action":"folder","folder_id":"f","mode":"shuffle"}`, `{"action":"folder","folder_id":"f","mode":"shuffle"}`, ""},
		{`{"action":"volume","value":{}}`, "", "value"},
		{`{"action":"volume","value":[1]}`, "", "value"},
	} {
		var cmd Command
		err := json.Unmarshal([]byte(c.in), &cmd)
		if c.err == "value" {
			var te *json.UnmarshalTypeError
			if !errors.As(err, &te) || te.Field != "value" {
				t.Errorf("%s: err %v, want a type error of field value", c.in, err)
			}
			continue
		}
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		out, _ := json.Marshal(cmd)
		if string(out) != c.out {
			t.Errorf("%s: encodes as %s", c.in, out)
		}
	}
}
