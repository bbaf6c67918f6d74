package cards

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/chime"
	"github.com/storybox/storybox/services/playerd/internal/clock/clocktest"
	"github.com/storybox/storybox/services/playerd/internal/library"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// fakePlayer records commands with their caller and plays along: a folder
// command makes the folder play, pause pauses it.
type fakePlayer struct {
	mu     sync.Mutex
	st     player.Status
	cmds   []player.Command
	via    []auth.Via
	refuse error
}

func (p *fakePlayer) Status() player.Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.st
}

func (p *fakePlayer) Do(ctx context.Context, c player.Command) (player.Status, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cmds = append(p.cmds, c)
	p.via = append(p.via, auth.CallerFrom(ctx).Via)
	if p.refuse != nil {
		return p.st, p.refuse
	}
	switch c.Action {
	case player.ActFolder, player.ActResume:
		id := c.FolderID
		p.st.FolderID, p.st.State = &id, player.Playing
	case player.ActPause:
		p.st.State = player.Paused
	case player.ActPlay:
		p.st.State = player.Playing
	case player.ActStop:
		p.st.State = player.Stopped
	}
	return p.st, nil
}

func (p *fakePlayer) commands() []player.Command {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]player.Command(nil), p.cmds...)
}

type catalog map[string]bool

func (c catalog) Folder(id string) (library.Folder, bool) {
	return library.Folder{ID: id}, c[id]
}

type fixture struct {
	svc    *Service
	player *fakePlayer
	clock  *clocktest.Clock
	dir    string
	sounds []chime.Sound
	reads  []Read
	mu     sync.Mutex
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	f := &fixture{player: &fakePlayer{st: player.Status{State: player.Stopped}},
		clock: clocktest.New(time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)), dir: t.TempDir()}
	store, err := Load(f.dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.svc, err = New(Options{Store: store, Player: f.player, Catalog: catalog{"f1": true, "f2": true, "st1": true},
		Resume: func(id string) (int, bool) { return 2, id == "f2" },
		Chime: func(_ context.Context, s chime.Sound) error {
			f.mu.Lock()
			f.sounds = append(f.sounds, s)
			f.mu.Unlock()
			return nil
		},
		OnRead:      func(r Read) { f.mu.Lock(); f.reads = append(f.reads, r); f.mu.Unlock() },
		UnknownFile: filepath.Join(f.dir, UnknownFileName),
		OnError:     func(err error) { t.Errorf("OnError: %v", err) },
		Clock:       f.clock})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// read places a card and moves the clock past the repeat window.
func (f *fixture) read(id string) Read {
	f.svc.Card(context.Background(), id, "reader")
	r := f.svc.Recent()[0]
	f.clock.Advance(Repeat)
	return r
}

func (f *fixture) put(t *testing.T, id string, m Mapping) {
	t.Helper()
	if _, err := f.svc.Put(id, m); err != nil {
		t.Fatal(err)
	}
}

func num(v float64) *float64 { return &v }

func TestFolderCardStartsAndDoesNotRestart(t *testing.T) {
	f := newFixture(t)
	f.put(t, "0004921380", Mapping{Action: ActFolder, FolderID: "f1", Name: "Bobo"})
	if r := f.read("0004921380"); r.Outcome != OutStarted || r.FolderID != "f1" {
		t.Fatalf("first read: %+v", r)
	}
	if r := f.read("0004921380"); r.Outcome != OutUnchanged {
		t.Errorf("playing card again: %+v", r)
	}
	f.player.Do(context.Background(), player.Command{Action: player.ActPause})
	if r := f.read("0004921380"); r.Outcome != OutContinued {
		t.Errorf("paused card again: %+v", r)
	}
	cmds := f.player.commands()
	want := []string{player.ActFolder, player.ActPause, player.ActPlay}
	if len(cmds) != len(want) {
		t.Fatalf("commands %+v, want %v", cmds, want)
	}
	for i, c := range cmds {
		if c.Action != want[i] {
			t.Errorf("command %d = %+v, want %s", i, c, want[i])
		}
	}
	if f.player.via[0] != auth.Card {
		t.Errorf("the command came as %q, want card", f.player.via[0])
	}
	if len(f.sounds) != 3 || f.sounds[0] != chime.Known {
		t.Errorf("sounds %v", f.sounds)
	}
}

func TestTogglePause(t *testing.T) {
	f := newFixture(t)
	if err := f.svc.Replace(Doc{Version: 1, SameCard: SameCardTogglePause, Sounds: false,
		Cards: map[string]Mapping{"11": {Action: ActFolder, FolderID: "f1"}}}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{OutStarted, OutPaused, OutContinued, OutPaused} {
		if r := f.read("11"); r.Outcome != want {
			t.Errorf("read %d: %s, want %s", i, r.Outcome, want)
		}
	}
	if len(f.sounds) != 0 {
		t.Errorf("sounds off, yet %v", f.sounds)
	}
}

// The same id within two seconds counts once, and the window slides: a
// reader that types the id every second while the card lies on it starts
// nothing new.
func TestRepeatWithinTwoSecondsIgnored(t *testing.T) {
	f := newFixture(t)
	f.put(t, "22", Mapping{Action: ActStop})
	f.svc.Card(context.Background(), "22", "reader")
	for range 3 {
		f.clock.Advance(time.Second)
		f.svc.Card(context.Background(), "22", "reader")
		if r := f.svc.Recent()[0]; r.Outcome != OutRepeat {
			t.Fatalf("read after 1 s: %+v", r)
		}
	}
	if n := len(f.player.commands()); n != 1 {
		t.Errorf("%d commands, want 1", n)
	}
	f.clock.Advance(Repeat)
	f.svc.Card(context.Background(), "22", "reader")
	if r := f.svc.Recent()[0]; r.Outcome != OutDone {
		t.Errorf("read after the window: %+v", r)
	}
	// Another card right away is not a repeat.
	f.put(t, "23", Mapping{Action: ActPause})
	f.svc.Card(context.Background(), "23", "reader")
	if r := f.svc.Recent()[0]; r.Outcome != OutDone {
		t.Errorf("another card: %+v", r)
	}
	if len(f.reads) != 3 {
		t.Errorf("published %d reads, want 3 (repeats are not published)", len(f.reads))
	}
}

func TestCommandCards(t *testing.T) {
	f := newFixture(t)
	f.put(t, "1", Mapping{Action: ActSleepTimer})
	f.put(t, "2", Mapping{Action: ActVolumeDelta, Value: num(-5)})
	f.put(t, "3", Mapping{Action: ActResume, FolderID: "f2"})
	f.put(t, "4", Mapping{Action: ActResume, FolderID: "f1"})
	f.put(t, "5", Mapping{Action: ActRadio, FolderID: "st1"})
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		f.read(id)
	}
	c := f.player.commands()
	if c[0].Action != ActSleepTimer || *c[0].Value != DefaultSleepMin {
		t.Errorf("sleep timer card: %+v", c[0])
	}
	if c[1].Action != player.ActVolumeDelta || *c[1].Value != -5 {
		t.Errorf("volume card: %+v", c[1])
	}
	if c[2].Action != player.ActResume || *c[2].ItemIndex != 2 || c[2].FolderID != "f2" {
		t.Errorf("resume card with a resume point: %+v", c[2])
	}
	if c[3].Action != player.ActFolder || c[3].FolderID != "f1" {
		t.Errorf("resume card without one: %+v", c[3])
	}
	if c[4].Action != player.ActFolder || c[4].FolderID != "st1" {
		t.Errorf("radio card: %+v", c[4])
	}
}

// A refused command gives the gentle sound after the read sound, and the
// read says why.
func TestRefusedCardSoundsGentle(t *testing.T) {
	f := newFixture(t)
	f.put(t, "7", Mapping{Action: ActFolder, FolderID: "f1"})
	f.player.refuse = fault.New(fault.Forbidden, "bedtime")
	r := f.read("7")
	if r.Outcome != OutRefused || r.Error != "bedtime" {
		t.Errorf("read: %+v", r)
	}
	if len(f.sounds) != 2 || f.sounds[1] != chime.Refused {
		t.Errorf("sounds %v", f.sounds)
	}
	f.player.refuse = errors.New("disk on fire")
	if r := f.read("7"); r.Outcome != OutFailed {
		t.Errorf("internal failure: %+v", r)
	}
}

func TestUnknownCardsRemembered(t *testing.T) {
	f := newFixture(t)
	f.read("99")
	f.read("98")
	f.read("99")
	u := f.svc.Unknown()
	if len(u) != 2 || u[0].ID != "99" || u[0].Count != 2 || u[1].ID != "98" || !u[0].FirstSeen.Before(u[0].LastSeen) {
		t.Fatalf("unknown: %+v", u)
	}
	if len(f.sounds) != 3 || f.sounds[0] != chime.Unknown {
		t.Errorf("sounds %v", f.sounds)
	}
	if len(f.player.commands()) != 0 {
		t.Error("an unknown card sent a command")
	}
	// Remembered across a restart.
	store, _ := Load(f.dir, nil)
	again, err := New(Options{Store: store, Player: f.player, Catalog: catalog{}, UnknownFile: filepath.Join(f.dir, UnknownFileName)})
	if err != nil || len(again.Unknown()) != 2 {
		t.Fatalf("after restart: %v, %+v", err, again.Unknown())
	}
	// Assigned, it leaves the list; a dismissed one too.
	f.put(t, "99", Mapping{Action: ActStop})
	if err := f.svc.ForgetUnknown("98"); err != nil {
		t.Fatal(err)
	}
	if u := f.svc.Unknown(); len(u) != 0 {
		t.Errorf("after assigning: %+v", u)
	}
	if err := f.svc.ForgetUnknown("98"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("forget twice: %v", err)
	}
	// At most maxUnknown, the oldest go.
	for i := range maxUnknown + 5 {
		f.read(strings.Repeat("1", i+1))
	}
	if u := f.svc.Unknown(); len(u) != maxUnknown || u[0].ID != strings.Repeat("1", maxUnknown+5) {
		t.Errorf("bounded list: %d, newest %v", len(u), u[0].ID)
	}
}

// The repeat window and teach mode are durations: a step of the wall
// clock (network time at boot) neither makes a card lying on the reader
// start again nor lets it through the window early, and teach mode waits
// its time.
func TestRepeatAndTeachModeAcrossClockSteps(t *testing.T) {
	f := newFixture(t)
	f.put(t, "22", Mapping{Action: ActStop})
	f.svc.Card(context.Background(), "22", "reader")
	for _, step := range []time.Duration{time.Hour, -2 * time.Hour, 365 * 24 * time.Hour} {
		f.clock.Step(step)
		f.clock.Advance(time.Second)
		f.svc.Card(context.Background(), "22", "reader")
		if r := f.svc.Recent()[0]; r.Outcome != OutRepeat {
			t.Fatalf("read 1 s later, after a step of %v: %+v", step, r)
		}
	}
	if n := len(f.player.commands()); n != 1 {
		t.Errorf("%d commands, want 1", n)
	}

	l, _ := f.svc.StartLearn(30 * time.Second)
	f.clock.Step(time.Hour)
	l2 := f.svc.Learning(context.Background(), 0)
	if l2.State != LearnWaiting || !l2.Until.Equal(l.Until.Add(time.Hour)) {
		t.Fatalf("teach mode after a step forward: %+v (until %v before)", l2, l.Until)
	}
	f.clock.Step(-2 * time.Hour)
	f.clock.Advance(30 * time.Second)
	if l := f.svc.Learning(context.Background(), 0); l.State != LearnExpired {
		t.Errorf("teach mode after a step back and its 30 s: %+v", l)
	}
}

func TestTeachMode(t *testing.T) {
	f := newFixture(t)
	f.put(t, "55", Mapping{Action: ActFolder, FolderID: "f1"})
	if l := f.svc.Learning(context.Background(), 0); l.State != LearnIdle {
		t.Errorf("before: %+v", l)
	}
	if _, err := f.svc.StartLearn(time.Hour); fault.KindOf(err) != fault.Invalid {
		t.Errorf("an hour: %v", err)
	}
	l, err := f.svc.StartLearn(30 * time.Second)
	if err != nil || l.State != LearnWaiting || !l.Until.Equal(f.clock.Now().Add(30*time.Second)) {
		t.Fatalf("start: %+v, %v", l, err)
	}
	// A waiting client hears the card as soon as it is read.
	got := make(chan Learn)
	go func() { got <- f.svc.Learning(context.Background(), MaxLearnWait) }()
	f.svc.Card(context.Background(), "55", "reader")
	l = <-got
	if l.State != LearnSeen || l.Card.ID != "55" || !l.Card.Known || l.Card.Mapping.FolderID != "f1" {
		t.Fatalf("seen: %+v", l)
	}
	if len(f.player.commands()) != 0 {
		t.Error("the learned card played")
	}
	if f.sounds[len(f.sounds)-1] != chime.Learned {
		t.Errorf("sounds %v", f.sounds)
	}
	// The next card acts again.
	f.clock.Advance(Repeat)
	if r := f.read("55"); r.Outcome != OutStarted {
		t.Errorf("after teach mode: %+v", r)
	}
	// Unknown cards are reported as unknown and not remembered as such.
	f.svc.StartLearn(0)
	f.read("66")
	if l := f.svc.Learning(context.Background(), 0); l.Card.ID != "66" || l.Card.Known || l.Card.Mapping != nil {
		t.Errorf("unknown learned: %+v", l)
	}
	if len(f.svc.Unknown()) != 0 {
		t.Error("a learned card went to the unknown list")
	}
	// Expiry and cancel.
	f.svc.StartLearn(5 * time.Second)
	f.clock.Advance(5 * time.Second)
	if l := f.svc.Learning(context.Background(), time.Second); l.State != LearnExpired {
		t.Errorf("expired: %+v", l)
	}
	f.svc.StartLearn(0)
	if l := f.svc.StopLearn(); l.State != LearnIdle {
		t.Errorf("stopped: %+v", l)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.svc.StartLearn(0)
	cancel()
	if l := f.svc.Learning(ctx, MaxLearnWait); l.State != LearnWaiting {
		t.Errorf("cancelled wait: %+v", l)
	}
}

func TestMappingsValidatedAndSaved(t *testing.T) {
	f := newFixture(t)
	bad := []struct {
		id string
		m  Mapping
	}{
		{"abc", Mapping{Action: ActStop}},
		{"", Mapping{Action: ActStop}},
		{strings.Repeat("1", 33), Mapping{Action: ActStop}},
		{"1", Mapping{}},
		{"1", Mapping{Action: "explode"}},
		{"1", Mapping{Action: ActFolder}},
		{"1", Mapping{Action: ActFolder, FolderID: "nope"}},
		{"1", Mapping{Action: ActStop, FolderID: "f1"}},
		{"1", Mapping{Action: ActStop, Value: num(1)}},
		{"1", Mapping{Action: ActVolumeDelta}},
		{"1", Mapping{Action: ActVolumeDelta, Value: num(0)}},
		{"1", Mapping{Action: ActVolumeDelta, Value: num(2.5)}},
		{"1", Mapping{Action: ActSleepTimer, Value: num(0)}},
		{"1", Mapping{Action: ActSleepTimer, Value: num(4)}},
		{"1", Mapping{Action: ActSleepTimer, Value: num(121)}},
		{"1", Mapping{Action: ActStop, Name: "a\nb"}},
		{"1", Mapping{Action: ActStop, Name: strings.Repeat("x", 81)}},
	}
	for _, b := range bad {
		if _, err := f.svc.Put(b.id, b.m); fault.KindOf(err) != fault.Invalid {
			t.Errorf("Put(%q, %+v) = %v, want invalid", b.id, b.m, err)
		}
	}
	if _, err := os.Stat(filepath.Join(f.dir, FileName)); !os.IsNotExist(err) {
		t.Error("refused mappings wrote a file")
	}
	if data, _ := f.svc.o.Store.Read(); data != nil {
		t.Error("backup content without a saved file")
	}
	f.put(t, "0A1B", Mapping{Action: ActFolder, FolderID: "f1", Name: "Räuber"})
	data, err := os.ReadFile(filepath.Join(f.dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := Check(data); err != nil {
		t.Errorf("saved file does not check: %v", err)
	}
	store, err := Load(f.dir, nil)
	if err != nil || store.Get().Cards["0A1B"].Name != "Räuber" {
		t.Errorf("reloaded: %v %+v", err, store.Get())
	}
	if err := f.svc.Delete("0A1B"); err != nil {
		t.Fatal(err)
	}
	if err := f.svc.Delete("0A1B"); fault.KindOf(err) != fault.NotFound {
		t.Errorf("delete twice: %v", err)
	}
	if err := f.svc.Replace(Doc{Version: 1, SameCard: "sometimes", Cards: map[string]Mapping{}}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("bad same_card: %v", err)
	}
	if err := f.svc.Replace(Doc{Version: 1, SameCard: SameCardContinue, Cards: map[string]Mapping{"1": {Action: ActFolder, FolderID: "gone"}}}); err == nil || !strings.Contains(err.Error(), "card 1") {
		t.Errorf("missing folder in a document: %v", err)
	}
}

func TestCheck(t *testing.T) {
	good := `{"version":1,"same_card":"continue","sounds":true,"cards":{"12":{"action":"stop"}}}`
	if err := Check([]byte(good)); err != nil {
		t.Errorf("good: %v", err)
	}
	for _, bad := range []string{
		``, `[]`, `{"version":1}`, good + `{}`,
		`{"version":2,"same_card":"continue","sounds":true,"cards":{}}`,
		`{"version":1,"same_card":"continue","sounds":true,"cards":{},"extra":1}`,
		`{"version":1,"same_card":"continue","sounds":true,"cards":{"x":{"action":"stop"}}}`,
		`{"version":1,"same_card":"continue","sounds":true,"cards":{"1":{"action":"sleep_timer"}}}`,
		`{"version":1,"same_card":"continue","sounds":true,"cards":null}`,
	} {
		if err := Check([]byte(bad)); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%s: %v", bad, err)
		}
	}
}

// A corrupt file is reported, the defaults are used and the file stays.
func TestCorruptFileKept(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, FileName)
	os.WriteFile(p, []byte("{broken"), 0o644)
	s, err := Load(dir, nil)
	if err == nil || len(s.Get().Cards) != 0 {
		t.Errorf("corrupt: %v, %+v", err, s.Get())
	}
	if data, _ := os.ReadFile(p); string(data) != "{broken" {
		t.Error("the corrupt file was touched")
	}
}

// A write that fails changes nothing.
func TestFailedSaveChangesNothing(t *testing.T) {
	f := newFixture(t)
	f.put(t, "1", Mapping{Action: ActStop})
	f.svc.o.Store.path = filepath.Join(f.dir, "missing-dir", "sub\x00", FileName)
	if _, err := f.svc.Put("2", Mapping{Action: ActStop}); err == nil {
		t.Fatal("write into an impossible path succeeded")
	}
	if _, ok := f.svc.Doc().Cards["2"]; ok {
		t.Error("a failed save changed the mappings")
	}
}
