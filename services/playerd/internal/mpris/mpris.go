// Package mpris makes the box a media player of a Linux desktop session:
// media keys, the desktop's sound menu and playerctl see it as
// org.mpris.MediaPlayer2.storybox. It is for `make run` on a developer's
// machine; the box itself has no D-Bus, and playerd leaves this off
// unless told (-mpris session).
//
// Methods become player commands through the same path as the HTTP API
// (Player.Do), so every rule that applies there applies here; D-Bus callers
// carry no identity, so rules treat them as an anonymous client of the
// network. Property changes are signalled from the event feed.
package mpris

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"reflect"
	"strconv"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"github.com/storybox/storybox/services/internal/fault"
	"github.com/storybox/storybox/services/playerd/internal/events"
	"github.com/storybox/storybox/services/playerd/internal/player"
)

// Player is what MPRIS needs of the engine: the HTTP API's own path.
type Player interface {
	Status() player.Status
	Do(ctx context.Context, cmd player.Command) (player.Status, error)
}

// Feed is the event feed (*events.Bus).
type Feed interface {
	Subscribe() *events.Subscription
}

// Config is what Run needs.
type Config struct {
	Player Player
	Events Feed
	// Address of the session bus; empty: SessionAddress.
	Address string
	// Name completes the bus name org.mpris.MediaPlayer2.<Name>; default
	// "storybox". When another player holds it (a second playerd), the
	// name gets ".instance<pid>", as MPRIS asks.
	Name string
	// CoverBase is put in front of /api/cover/<id> for mpris:artUrl, e.g.
	// "http://127.0.0.1:8090"; empty: no art.
	CoverBase string
	// Identity is the name desktops show; default "storybox".
	Identity string
	// OnReady, if set, hears the bus name once it is owned.
	OnReady func(name string)
}

const (
	objectPath  = dbus.ObjectPath("/org/mpris/MediaPlayer2")
	rootIface   = "org.mpris.MediaPlayer2"
	playerIface = "org.mpris.MediaPlayer2.Player"
	propsIface  = "org.freedesktop.DBus.Properties"
	// introspectIface answers tools that ask what the object offers.
	introspectIface = "org.freedesktop.DBus.Introspectable"
	// commandTimeout bounds one method call's command.
	commandTimeout = 5 * time.Second
)

// ErrNoSessionBus: no session bus address in the environment and none at
// the usual place.
var ErrNoSessionBus = errors.New("mpris: no session bus (DBUS_SESSION_BUS_ADDRESS unset, no /run/user/<uid>/bus)")

// SessionAddress is the session bus of the desktop playerd runs in:
// DBUS_SESSION_BUS_ADDRESS, else the systemd user bus socket. Unlike
// godbus's own lookup it never starts a bus.
func SessionAddress() (string, error) {
	if a := os.Getenv("DBUS_SESSION_BUS_ADDRESS"); a != "" {
		return a, nil
	}
	sock := "/run/user/" + strconv.Itoa(os.Getuid()) + "/bus"
	if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
		return "unix:path=" + sock, nil
	}
	return "", ErrNoSessionBus
}

// Run connects to the session bus, exports the player and signals its
// changes until ctx ends. It returns early with an error when the bus
// cannot be reached, the name cannot be had, or the bus goes away.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Player == nil || cfg.Events == nil {
		return errors.New("mpris: a player and an event feed are required")
	}
	if cfg.Name == "" {
		cfg.Name = "storybox"
	}
	if cfg.Identity == "" {
		cfg.Identity = "storybox"
	}
	addr := cfg.Address
	if addr == "" {
		var err error
		if addr, err = SessionAddress(); err != nil {
			return err
		}
	}
	// Subscribed before anything is visible on the bus: no change after
	// a client's first look is missed.
	sub := cfg.Events.Subscribe()
	defer func() { sub.Close() }()
	conn, err := dbus.Connect(addr, dbus.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("mpris: session bus: %w", err)
	}
	defer conn.Close()
	s := &server{cfg: cfg, conn: conn}
	s.last = s.signalled(cfg.Player.Status())
	if err := s.export(); err != nil {
		return err
	}
	name, err := s.requestName()
	if err != nil {
		return err
	}
	if cfg.OnReady != nil {
		cfg.OnReady(name)
	}
	for {
		ready := sub.Ready()
		ev, err := sub.Next()
		switch {
		case errors.Is(err, events.ErrSlow):
			sub.Close()
			sub = cfg.Events.Subscribe()
			s.changed(nil)
			continue
		case err != nil: // the feed closed: the box is shutting down
			<-ctx.Done()
			return nil
		case ev != nil:
			s.changed(ev)
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-conn.Context().Done():
			if ctx.Err() != nil {
				return nil // the connection ends with ctx (dbus.WithContext)
			}
			return errors.New("mpris: the session bus went away")
		case <-ready:
		}
	}
}

// server holds the connection and what was last signalled.
type server struct {
	cfg  Config
	conn *dbus.Conn
	mu   sync.Mutex
	last map[string]dbus.Variant
}

func (s *server) export() error {
	for iface, v := range map[string]any{
		rootIface:       root{},
		playerIface:     (*playerMethods)(s),
		propsIface:      (*properties)(s),
		introspectIface: introspect.Introspectable(introspection),
	} {
		// SeekBy is MPRIS's Seek: a Go method named Seek would look
		// like io.Seeker's.
		if err := s.conn.ExportWithMap(v, map[string]string{"SeekBy": "Seek"}, objectPath, iface); err != nil {
			return fmt.Errorf("mpris: export %s: %w", iface, err)
		}
	}
	return nil
}

func (s *server) requestName() (string, error) {
	name := "org.mpris.MediaPlayer2." + s.cfg.Name
	for _, n := range []string{name, name + ".instance" + strconv.Itoa(os.Getpid())} {
		reply, err := s.conn.RequestName(n, dbus.NameFlagDoNotQueue)
		if err != nil {
			return "", fmt.Errorf("mpris: request name %s: %w", n, err)
		}
		if reply == dbus.RequestNameReplyPrimaryOwner {
			return n, nil
		}
	}
	return "", fmt.Errorf("mpris: the name %s is taken", name)
}

// signalled is what PropertiesChanged tells of a status.
func (s *server) signalled(st player.Status) map[string]dbus.Variant {
	p := playerProps(st, s.cfg.CoverBase)
	for k := range unsignalled {
		delete(p, k)
	}
	return p
}

// changed signals what an event changed (nil: anything may have). A jump
// of the position is Seeked; so is a new track that does not start at 0
// (a folder resumed where it was left).
func (s *server) changed(ev *events.Event) {
	if ev != nil {
		switch ev.Kind {
		case events.KindState, events.KindQueue, events.KindTrack, events.KindVolume, events.KindSeek, events.KindNowPlaying, events.KindModes:
		default:
			return
		}
	}
	st := s.cfg.Player.Status()
	now := s.signalled(st)
	s.mu.Lock()
	diff := map[string]dbus.Variant{}
	for k, v := range now {
		if old, ok := s.last[k]; !ok || !reflect.DeepEqual(old.Value(), v.Value()) {
			diff[k] = v
		}
	}
	s.last = now
	s.mu.Unlock()
	if len(diff) > 0 {
		_ = s.conn.Emit(objectPath, propsIface+".PropertiesChanged", playerIface, diff, []string{})
	}
	if ev != nil && (ev.Kind == events.KindSeek || ev.Kind == events.KindTrack && st.Position >= 0.5) {
		_ = s.conn.Emit(objectPath, playerIface+".Seeked", micros(st.Position))
	}
}

// do runs a command as the HTTP API would. A command that is not possible
// right now (play with nothing loaded) has no effect, as MPRIS specifies;
// a refusal (a parental rule) is told to the caller.
func (s *server) do(c player.Command) *dbus.Error {
	ctx, cancel := context.WithTimeout(context.Background(), commandTimeout)
	defer cancel()
	_, err := s.cfg.Player.Do(ctx, c)
	switch fault.KindOf(err) {
	case fault.Conflict:
		return nil
	case fault.Forbidden, fault.Unauthorized:
		return dbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{fault.Message(err)})
	case fault.Invalid:
		return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{fault.Message(err)})
	}
	if err != nil {
		return dbus.NewError("org.freedesktop.DBus.Error.Failed", []any{fault.Message(err)})
	}
	return nil
}

// root is org.mpris.MediaPlayer2: nothing to raise, nothing to quit.
type root struct{}

func (root) Raise() *dbus.Error { return nil }
func (root) Quit() *dbus.Error  { return nil }

// playerMethods is org.mpris.MediaPlayer2.Player.
type playerMethods server

func (p *playerMethods) s() *server { return (*server)(p) }

func (p *playerMethods) act(action string) *dbus.Error {
	return p.s().do(player.Command{Action: action})
}

func (p *playerMethods) Next() *dbus.Error      { return p.act(player.ActNext) }
func (p *playerMethods) Previous() *dbus.Error  { return p.act(player.ActPrevious) }
func (p *playerMethods) Pause() *dbus.Error     { return p.act(player.ActPause) }
func (p *playerMethods) PlayPause() *dbus.Error { return p.act(player.ActToggle) }
func (p *playerMethods) Stop() *dbus.Error      { return p.act(player.ActStop) }
func (p *playerMethods) Play() *dbus.Error      { return p.act(player.ActPlay) }

// SeekBy is Seek: it moves by offset microseconds; past the end it is
// Next, before the start the start (MPRIS).
func (p *playerMethods) SeekBy(offset int64) *dbus.Error {
	st := p.s().cfg.Player.Status()
	if st.Index < 0 || st.Duration <= 0 {
		return nil
	}
	target := math.Max(0, st.Position+float64(offset)/1e6)
	if target > st.Duration {
		return p.Next()
	}
	return p.s().do(player.Command{Action: player.ActSeek, Value: &target})
}

// SetPosition jumps within the current track; a stale track id or a
// position outside the track does nothing (MPRIS).
func (p *playerMethods) SetPosition(track dbus.ObjectPath, position int64) *dbus.Error {
	st := p.s().cfg.Player.Status()
	if st.Index < 0 || st.Index >= len(st.Queue) || track != trackID(st.Queue[st.Index].ID) {
		return nil
	}
	pos := float64(position) / 1e6
	if pos < 0 || pos > st.Duration {
		return nil
	}
	return p.s().do(player.Command{Action: player.ActSeek, Value: &pos})
}

// OpenUri: the box plays its own library only.
func (p *playerMethods) OpenUri(string) *dbus.Error {
	return dbus.NewError("org.freedesktop.DBus.Error.NotSupported", []any{"storybox plays its own library only"})
}

// properties is org.freedesktop.DBus.Properties, computed from the
// player's status at each call (the position is always current).
type properties server

func (p *properties) all(iface string) (map[string]dbus.Variant, *dbus.Error) {
	s := (*server)(p)
	switch iface {
	case rootIface:
		return rootProps(s.cfg.Identity), nil
	case playerIface:
		return playerProps(s.cfg.Player.Status(), s.cfg.CoverBase), nil
	}
	return nil, dbus.NewError("org.freedesktop.DBus.Error.UnknownInterface", []any{"no interface " + iface})
}

func (p *properties) Get(iface, name string) (dbus.Variant, *dbus.Error) {
	all, err := p.all(iface)
	if err != nil {
		return dbus.Variant{}, err
	}
	v, ok := all[name]
	if !ok {
		return dbus.Variant{}, dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{"no property " + name})
	}
	return v, nil
}

func (p *properties) GetAll(iface string) (map[string]dbus.Variant, *dbus.Error) {
	return p.all(iface)
}

// Set takes Volume (0..1; the player caps it at the box's maximum),
// Shuffle and LoopStatus (the player's shuffle and repeat commands); every
// other property is read-only.
func (p *properties) Set(iface, name string, value dbus.Variant) *dbus.Error {
	all, err := p.all(iface)
	if err != nil {
		return err
	}
	if _, ok := all[name]; !ok {
		return dbus.NewError("org.freedesktop.DBus.Error.UnknownProperty", []any{"no property " + name})
	}
	switch {
	case iface == playerIface && name == "Shuffle":
		on, ok := value.Value().(bool)
		if !ok {
			return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{"Shuffle takes a boolean"})
		}
		return (*server)(p).do(player.Command{Action: player.ActShuffle, On: &on})
	case iface == playerIface && name == "LoopStatus":
		loop, _ := value.Value().(string)
		r, ok := repeatOf(loop)
		if !ok {
			return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{"LoopStatus is None, Track or Playlist"})
		}
		return (*server)(p).do(player.Command{Action: player.ActRepeat, Word: r})
	}
	if iface != playerIface || name != "Volume" {
		return dbus.NewError("org.freedesktop.DBus.Error.PropertyReadOnly", []any{name + " is read-only"})
	}
	v, ok := value.Value().(float64)
	if !ok || math.IsNaN(v) {
		return dbus.NewError("org.freedesktop.DBus.Error.InvalidArgs", []any{"Volume takes a double"})
	}
	vol := math.Round(math.Min(math.Max(v, 0), 1) * 100)
	return (*server)(p).do(player.Command{Action: player.ActVolume, Value: &vol})
}

// CoverBase is the API at addr as this machine's desktop reaches it, for
// Config.CoverBase: a listener on every address (":8090") is asked on
// loopback.
func CoverBase(addr net.Addr) string {
	ta, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	ip := ta.IP
	if ip == nil || ip.IsUnspecified() {
		ip = net.IPv4(127, 0, 0, 1) // a dual-stack listener takes IPv4 too
	}
	return "http://" + net.JoinHostPort(ip.String(), strconv.Itoa(ta.Port))
}
