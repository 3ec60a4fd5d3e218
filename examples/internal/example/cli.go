package example

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
)

// NewFlagSet returns the flag set of the program name: it reports to
// stderr, returns errors rather than exiting, and on -h prints usage
// followed by the flags and their defaults.
func NewFlagSet(name string, stderr io.Writer, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	return fs
}

// Parse parses args with fs, then checks what the flag package does not: no
// argument may be left over (the error, "NAME: unexpected argument ...", is
// printed with the usage), and validate, if not nil, must accept the values
// (its error is printed). It returns flag.ErrHelp after -h, and the flag
// package's error, which it has printed, for a bad flag.
//
// validate runs after parsing: give it a closure over the config the flags
// set (func() error { return cfg.validate() }), not a method value, which
// would check a copy taken before parsing.
func Parse(fs *flag.FlagSet, args []string, validate func() error) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))
		fmt.Fprintln(fs.Output(), err)
		fs.Usage()
		return err
	}
	if validate == nil {
		return nil
	}
	if err := validate(); err != nil {
		fmt.Fprintln(fs.Output(), err)
		return err
	}
	return nil
}

// Main is an example program's main: parse reads the command line
// (os.Args[1:]) and prints its own problems to stderr, then run runs with a
// context that Ctrl-C cancels, writing to stdout. It exits with status 0
// after -h, 2 for a bad command line, and 1, after printing the error, if
// run fails.
func Main[C any](parse func(args []string, stderr io.Writer) (C, error), run func(ctx context.Context, cfg C, stdout io.Writer) error) {
	os.Exit(mainStatus(os.Args[1:], os.Stdout, os.Stderr, parse, run))
}

// mainStatus is Main, returning the exit status.
func mainStatus[C any](args []string, stdout, stderr io.Writer, parse func([]string, io.Writer) (C, error), run func(context.Context, C, io.Writer) error) int {
	cfg, err := parse(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2 // parse has printed the problem
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}
