package player

import "context"

// Gate judges everything that would change playback before the player does
// it: every command of Do and every announcement. It is the one place the
// parental rules are enforced (package rules implements it).
//
// The gate sits inside the player rather than in front of it, for two
// reasons. Nothing can go around it: the touch screen, the API, home
// automation, cards and the rules' own timers all hold the same *Player, and
// Do and Announce are the only ways in. And it judges the state the command
// meets, not a snapshot from before: "play" is judged against the folder
// that is loaded at the moment it runs, in the goroutine that runs it.
type Gate interface {
	// Admit is called in the player goroutine for each request, after the
	// command's fields were checked and before it runs. ctx is the
	// caller's (auth.CallerFrom tells who asks). It returns the verdict,
	// or an error (of kind fault.Forbidden for a rule's refusal) that
	// refuses the request: nothing changes then. It must not block.
	Admit(ctx context.Context, a Ask) (Verdict, error)
}

// Ask is what the gate is asked about.
type Ask struct {
	// Cmd is the command; zero for an announcement.
	Cmd Command
	// Announce: an announcement (speech, a warning tone) asks to play.
	Announce bool
	// Playing: the music plays (or returns to playing after the
	// announcements now playing), so play continues rather than starts.
	Playing bool
	// FolderID is the folder loaded now; "" when none.
	FolderID string
}

// Verdict is an admission, possibly with a limit.
type Verdict struct {
	// MaxVolume, when above 0, caps every volume below Config.MaxVolume from
	// now until a later verdict says otherwise (the night maximum). A louder
	// volume is lowered at once.
	MaxVolume int
	// Commit, when set, runs in the player goroutine once the request has
	// succeeded, so the gate records only what really happened. It must
	// not block.
	Commit func()
}

// admit asks the gate about r and applies the limit of its verdict.
func (p *Player) admit(r request) (Verdict, error) {
	if p.cfg.Gate == nil {
		return Verdict{}, nil
	}
	a := Ask{Cmd: r.cmd, Announce: r.clip != nil, Playing: p.intent() == Playing}
	if a.Announce {
		a.Cmd = Command{}
	}
	if p.folder != nil {
		a.FolderID = p.folder.ID
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	v, err := p.cfg.Gate.Admit(ctx, a)
	if err != nil {
		return Verdict{}, err
	}
	if v.MaxVolume != p.gateMax {
		p.gateMax = max(v.MaxVolume, 0)
		// A lower cap is heard at once, as a lower maximum in the
		// settings is: the volume goes down through the one setter.
		_ = p.setVolume(p.volume)
	}
	return v, nil
}

// maxVolume is the cap every volume is held under: the output's maximum
// (the settings' for the speaker or the headphones), or the gate's when
// that is lower.
func (p *Player) maxVolume() int {
	if p.gateMax > 0 && p.gateMax < p.outputMax() {
		return p.gateMax
	}
	return p.outputMax()
}
