package display

import (
	"context"
	"errors"
	"fmt"
	"image"
	"time"

	"github.com/storybox/storybox/services/playerd/internal/auth"
	"github.com/storybox/storybox/services/playerd/internal/player"
	"github.com/storybox/storybox/services/playerd/internal/rules"
)

// Tap acts on a tap at p as the child sees the screen: on the targets of
// the frame last drawn. Player commands go through Command. A command a
// parental rule refuses is no error: the child sees why instead.
func (d *Display) Tap(ctx context.Context, p image.Point) error {
	d.mu.Lock()
	d.lastActive = d.o.Now()
	d.mu.Unlock()
	d.rmu.Lock()
	dark := d.shown != nil && d.shown.Dark
	act, ok := hit(d.targets, p)
	d.rmu.Unlock()
	if dark {
		// The first touch only wakes the screen: nothing under the finger
		// was visible.
		return d.refresh(ctx)
	}
	if !ok {
		return nil
	}
	// Draw the result at once, so the child sees the tap took, and the next
	// tap meets the new targets.
	defer func() {
		if err := d.refresh(ctx); err != nil {
			d.o.OnError(err)
		}
	}()
	switch act.kind {
	case actCommand, actPlayItem:
		cmd := act.cmd
		if err := d.Command(ctx, cmd); err != nil {
			var refusal *rules.Refusal
			if errors.As(err, &refusal) {
				return nil
			}
			return fmt.Errorf("display: tap %q: %w", cmd.Action, err)
		}
		if act.kind == actPlayItem {
			d.rmu.Lock()
			d.homeStale = true // resume rows follow what plays
			d.rmu.Unlock()
			d.mu.Lock()
			d.screen = screenPlaying
			d.mu.Unlock()
		}
		return nil
	case actWifi:
		if d.wifi != nil {
			d.wifi.Tap(act.wifi)
		}
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	switch act.kind {
	case actTab:
		d.tab, d.page = act.n, 0
	case actPage:
		d.page += act.n
	case actGoHome:
		d.screen = screenHome
	case actGoPlaying:
		d.screen = screenPlaying
	case actDismiss:
		if d.msg != nil {
			d.msg = nil
			d.o.Messages.Dismiss()
		}
	case actCancelPairing:
		if d.o.Pairing != nil {
			if err := d.o.Pairing.Cancel(); err != nil {
				d.o.OnError(err)
			}
		}
	}
	return nil
}

// Command runs cmd for the touch screen: the caller is auth.Touch (the
// child), and whatever the rules say of a child's command holds for it. A
// refusal of a rule is shown as a friendly screen (bedtime, enough for
// today, a parent's folder) and returned.
func (d *Display) Command(ctx context.Context, cmd player.Command) error {
	ctx = auth.WithCaller(ctx, auth.Caller{Via: auth.Touch})
	_, err := d.o.Player.Do(ctx, cmd)
	var refusal *rules.Refusal
	if errors.As(err, &refusal) {
		d.ShowRefusal(refusal)
	}
	return err
}

// ShowRefusal says in the child's words why nothing plays: after a refused
// tap, and when a rule ended the music.
func (d *Display) ShowRefusal(r *rules.Refusal) {
	d.mu.Lock()
	tx := textsByLang[d.o.Lang]
	d.mu.Unlock()
	title, text := tx.Locked, tx.LockedText
	switch r.Reason {
	case rules.ReasonBedtime:
		title, text = tx.Bedtime, fmt.Sprintf(tx.BedtimeText, r.Until.Format("15:04"))
	case rules.ReasonDailyLimit:
		title, text = tx.Enough, tx.EnoughText
	}
	ms := int64(refusalShown / time.Millisecond)
	if _, err := d.ShowMessage(MessageRequest{Title: &title, Message: &text, DurationMS: &ms}); err != nil {
		d.o.OnError(err)
	}
}

// refusalShown is how long the friendly screen stays, as the real box's
// own messages do.
const refusalShown = 6 * time.Second
