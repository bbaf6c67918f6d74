package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// css is a CSS selector for chromedp.
type css = chromedp.CSS

// adminArtifacts is where the admin page's screenshots go (kept by CI as
// test artifacts, not committed).
const adminArtifacts = "../../build/test-artifacts/admin"

// chromiumPath finds Debian's chromium. Without it the test is skipped,
// unless STORYBOX_REQUIRE_CHROMIUM is set, as `make test` does after
// installing it: there a missing browser fails.
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("STORYBOX_REQUIRE_CHROMIUM") != "" {
		t.Fatal("chromium is not installed (make deps installs it)")
	}
	t.Skip("chromium is not installed; `make deps` installs it")
	return ""
}

// browserProblems collects what the page did wrong in the browser: an
// uncaught exception, a Content-Security-Policy violation, a script that
// failed to load.
type browserProblems struct {
	mu   sync.Mutex
	list []string
}

func (b *browserProblems) add(s string) {
	b.mu.Lock()
	b.list = append(b.list, s)
	b.mu.Unlock()
}

func (b *browserProblems) get() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.list...)
}

// adminBrowser is a headless Chromium with one tab, at phone size, that
// records what the page did wrong and what the first page load cost.
type adminBrowser struct {
	t        *testing.T
	ctx      context.Context // the tab, within the test's time
	bctx     context.Context // the tab without that limit, for reports
	problems browserProblems
	cancel   func()

	load struct {
		sync.Mutex
		bytes    float64
		requests int
		done     bool
	}
}

// newAdminBrowser starts Chromium; everything the test does in it must
// be done within limit. The screenshots' directory is made.
func newAdminBrowser(t *testing.T, limit time.Duration) *adminBrowser {
	t.Helper()
	chrome := chromiumPath(t)
	if err := os.MkdirAll(adminArtifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(adminArtifacts, "failure.png")) // an earlier run's
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.Flag("headless", "new"),
		chromedp.WindowSize(390, 844))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancelB := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(bctx, limit)
	b := &adminBrowser{t: t, ctx: ctx, bctx: bctx, cancel: func() { cancel(); cancelB(); cancelA() }}
	if err := chromedp.Listen(ctx, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventExceptionThrown:
			d := e.ExceptionDetails
			msg := d.Text
			if d.Exception != nil {
				msg += " " + d.Exception.Description
			}
			b.problems.add("exception: " + msg)
		case *log.EventEntryAdded:
			if e.Entry.Source == log.EntrySourceSecurity || e.Entry.Source == log.EntrySourceJavascript {
				b.problems.add(string(e.Entry.Source) + ": " + e.Entry.Text)
			}
		case *network.EventLoadingFinished:
			b.load.Lock()
			if !b.load.done {
				b.load.bytes += e.EncodedDataLength
				b.load.requests++
			}
			b.load.Unlock()
		}
	}); err != nil {
		b.cancel()
		t.Fatalf("chromium did not start: %v", err)
	}
	return b
}

// close ends the browser; it fails the test if the page reported
// problems or the test ran out of time.
func (b *adminBrowser) close() {
	if p := b.problems.get(); len(p) > 0 {
		b.t.Errorf("the browser reported: %q", p)
	}
	if b.ctx.Err() != nil {
		b.t.Error("the browser test ran out of time")
	}
	b.cancel()
}

// firstLoad ends the count of what the page's first load transferred
// (every response's encoded size, headers included) and returns it.
func (b *adminBrowser) firstLoad() (requests int, bytes float64) {
	b.load.Lock()
	defer b.load.Unlock()
	b.load.done = true
	return b.load.requests, b.load.bytes
}

// countAgain starts a new count of what loads transfer (ended by
// firstLoad), e.g. for a reload.
func (b *adminBrowser) countAgain() {
	b.load.Lock()
	defer b.load.Unlock()
	b.load.done, b.load.bytes, b.load.requests = false, 0, 0
}

// run does one step; on failure it saves what the page showed and stops
// the test.
func (b *adminBrowser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	sctx, scancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer scancel()
	if err := chromedp.Do(sctx, actions...); err != nil {
		dctx, dcancel := context.WithTimeout(b.bctx, 5*time.Second)
		defer dcancel()
		if buf, err := chromedp.Run(dctx, chromedp.FullScreenshot(100)); err == nil {
			_ = os.WriteFile(filepath.Join(adminArtifacts, "failure.png"), buf, 0o644)
		}
		body, _ := chromedp.Run(dctx, chromedp.Evaluate[string](`document.body.innerText`))
		b.t.Logf("page text at failure:\n%s", body)
		b.t.Fatalf("%s: %v (browser: %v)", step, err, b.problems.get())
	}
}

// shot saves a screenshot of the whole page as name.png.
func (b *adminBrowser) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(adminArtifacts, name+".png"), buf, 0o644)
	})
}

// shots saves the page at phone and at desktop width (name-phone.png,
// name-desktop.png) and goes back to the phone.
func (b *adminBrowser) shots(name string, ready chromedp.Action[chromedp.Void]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		for _, a := range []chromedp.Action[chromedp.Void]{b.shot(name + "-phone"),
			chromedp.EmulateViewport(1280, 800), ready, b.shot(name + "-desktop"),
			chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile)} {
			if _, err := a(ctx, tg); err != nil {
				return err
			}
		}
		return nil
	})
}

// pageText waits until the element's text contains want.
func pageText(sel, want string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want))
}

// clearValue clears an input the way a user selecting all and deleting
// does.
func clearValue(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[string](fmt.Sprintf(`document.querySelector(%q).value = ''`, sel))(ctx, tg)
		return err
	})
}

// edit sets a field's value as a user's edit does: the value, then the
// input and change events the page listens to (a select or a time
// field chosen from its picker).
func edit(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](fmt.Sprintf(`(() => {
  const e = document.querySelector(%q);
  if (!e) throw new Error('no element ' + %[1]q);
  e.focus();
  e.value = %q;
  e.dispatchEvent(new Event('input', { bubbles: true }));
  e.dispatchEvent(new Event('change', { bubbles: true }));
  return true;
})()`, sel, value))(ctx, tg)
		return err
	})
}
