// Package daemon is the one start shape of the box's programs (playerd,
// hatd, netd) and the HTTP+JSON over Unix sockets they speak to each other.
//
// Start: flags, each also settable by an environment variable named after
// it (-join-timeout is NETD_JOIN_TIMEOUT), parsed by the flag's own parser
// whether it comes from the command line or the environment, so a malformed
// value is a configuration error and never a silent default; then the
// configuration's Validate; then Run. A configuration that can never work,
// and a Run that found a condition no restart can fix (Permanent), end the
// process with ExitNoRestart, which gokrazy takes as "do not restart":
// restarting with the same flags every second would only repeat the error
// and flood gokrazy's 100 log lines.
//
// Sockets: Listen and CheckSocket are the one rule for a socket path,
// Server serves and makes its listener again after a failure, Socket and
// Handler are the server side of the wire format (package answer with
// errors that carry a fault kind), Client its client side.
//
// Parts: Group runs a daemon's long-lived parts and restarts those that
// fail.
package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// ExitNoRestart is gokrazy's "do not restart" status.
const ExitNoRestart = 125

// Config is a program's configuration: Validate checks it without opening
// anything, and what it rejects cannot work on any later attempt either.
type Config interface {
	Validate() error
}

// Program is one daemon.
type Program[C Config] struct {
	// Name is the program's name, for the usage line and the log.
	Name string
	// Env prefixes the environment variables: with "NETD", -join-timeout
	// is also NETD_JOIN_TIMEOUT. A flag on the command line wins.
	Env string
	// Default is the configuration before any flag.
	Default C
	// Flags binds the flags to c. The usage of each gets its variable's
	// name appended.
	Flags func(fs *flag.FlagSet, c *C)
	// Run runs the program until ctx ends; log writes to stderr.
	Run func(ctx context.Context, c C, log *slog.Logger) error
}

// Main runs p as the process: SIGTERM and SIGINT end ctx, and the exit
// status is Start's.
func Main[C Config](p Program[C]) {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	code := Start(ctx, p, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

// Start is Main without the process around it: it logs to stderr and
// returns the exit status: 0 after -h or a Run that ended cleanly,
// ExitNoRestart for a configuration that can never work or a Permanent
// error, 1 for any other error of Run.
func Start[C Config](ctx context.Context, p Program[C], args []string, stderr io.Writer) int {
	log := slog.New(slog.NewTextHandler(stderr, nil))
	cfg, err := Parse(p, args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		log.Error("configuration unusable, not restarting", "error", err)
		return ExitNoRestart
	}
	err = p.Run(ctx, cfg, log)
	switch {
	case err == nil:
		return 0
	case IsPermanent(err):
		log.Error(p.Name+" cannot work here, not restarting", "error", err)
		return ExitNoRestart
	}
	log.Error(p.Name+" stopped", "error", err)
	return 1
}

// Parse reads the command line, then the environment for every flag the
// command line did not set. It does not validate. Errors come back as one
// line and are not printed; -h prints the flags to help and returns
// flag.ErrHelp.
func Parse[C Config](p Program[C], args []string, help io.Writer) (C, error) {
	c := p.Default
	fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	p.Flags(fs, &c)
	fs.VisitAll(func(f *flag.Flag) { f.Usage += " (env " + EnvName(p.Env, f.Name) + ")" })
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) && help != nil {
			fs.SetOutput(help)
			fmt.Fprintf(help, "usage: %s [flags]\n", p.Name)
			fs.PrintDefaults()
		}
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var errs []error
	fs.VisitAll(func(f *flag.Flag) {
		name := EnvName(p.Env, f.Name)
		v, ok := os.LookupEnv(name)
		if !ok || given[f.Name] {
			return
		}
		if err := fs.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: %w", name, v, err))
		}
	})
	return c, errors.Join(errs...)
}

// EnvName is the environment variable of a flag: PREFIX_NAME, upper case,
// with dashes as underscores.
func EnvName(prefix, flagName string) string {
	return prefix + "_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// Permanent marks err as a condition that no restart can fix (hardware the
// system does not have): Start exits with ExitNoRestart. It returns nil for
// a nil err.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanent{err}
}

// IsPermanent reports whether err, or an error it wraps, was marked by
// Permanent.
func IsPermanent(err error) bool {
	var p permanent
	return errors.As(err, &p)
}

type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }
