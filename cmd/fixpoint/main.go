// Command fixpoint is the fixpoint language server and CLI.
//
// main only parses the subcommand, wires dependencies and handles signals;
// the work lives in the server, agent, sandbox and memory packages. Each
// subcommand lives in its own file (cmd_<name>.go).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// Exit codes, documented in README.md.
const (
	exitOK         = 0   // success, or verified
	exitNotReached = 1   // goal not reached, tests failing, check failed
	exitUsage      = 2   // usage or configuration error
	exitSIGINT     = 130 // interrupted by SIGINT
	exitSIGTERM    = 143 // terminated by SIGTERM
)

// version is set by the Makefile through -ldflags.
var version = "dev"

// app carries what every subcommand needs. Tests build their own.
type app struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	logger         *slog.Logger
}

// command is one subcommand.
type command struct {
	name    string
	summary string // one line for the command list
	usage   string // full help: usage line, flags are appended, then an example
	// hidden commands are not built yet: they are left out of help.
	hidden bool
	run    func(ctx context.Context, a *app, args []string) int
}

func commands() []*command {
	return []*command{
		serveCommand(),
		solveCommand(),
		fixCommand(),
		testCommand(),
		sandboxCommand(),
		memoryCommand(),
		historyCommand(),
		benchCommand(),
		doctorCommand(),
		daemonCommand(),
		trustCommand(),
		cacheCommand(),
		versionCommand(),
	}
}

func main() {
	a := &app{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv}
	a.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: logLevel(os.Getenv("FIXPOINT_LOG"))}))
	slog.SetDefault(a.logger)

	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		// Exits with the process; a second signal forces exit.
		s := <-sigs
		cancel(signalError{s.(syscall.Signal)})
		s = <-sigs
		os.Exit(exitCodeFor(s.(syscall.Signal)))
	}()
	startupPrune(a, os.Args[1:])
	code := run(ctx, a, os.Args[1:])
	if sig, ok := context.Cause(ctx).(signalError); ok && code != exitOK {
		code = exitCodeFor(sig.sig)
	}
	os.Exit(code)
}

// signalError is the cancel cause when a signal stopped the run.
type signalError struct{ sig syscall.Signal }

func (e signalError) Error() string { return "interrupted by " + e.sig.String() }

func exitCodeFor(s syscall.Signal) int {
	if s == syscall.SIGTERM {
		return exitSIGTERM
	}
	return exitSIGINT
}

func logLevel(s string) slog.Level {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

// run dispatches to a subcommand and returns the exit code.
func run(ctx context.Context, a *app, args []string) int {
	if len(args) == 0 {
		printHelp(a.stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 1 {
			return run(ctx, a, []string{args[1], "--help"})
		}
		printHelp(a.stdout)
		return exitOK
	case "-v", "--version":
		name = "version"
	}
	for _, c := range commands() {
		if c.name == name && !c.hidden {
			return c.run(ctx, a, args[1:])
		}
	}
	fmt.Fprintf(a.stderr, "fixpoint: unknown command %q\nRun 'fixpoint --help' for the list of commands.\n", name)
	return exitUsage
}

func printHelp(w io.Writer) {
	fmt.Fprintf(w, "fixpoint turns a goal into a verified edit: plan, edit, test in a sandbox, repeat.\n\nUsage: fixpoint <command> [flags]\n\nCommands:\n")
	for _, c := range commands() {
		if !c.hidden {
			fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun 'fixpoint <command> --help' for a command's flags and an example.\n")
}

// usageError is a bad flag, argument or configuration: exit code 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// fail prints err and returns its exit code: exitUsage for usage and
// configuration errors, else exitNotReached. An error may quote a file
// name, a test or the model: it is printed through termsafe.
func (a *app) fail(err error) int {
	fmt.Fprintf(a.stderr, "fixpoint: %s\n", termsafe.Strip(err.Error()))
	var ue *usageError
	if errors.As(err, &ue) || isConfigError(err) {
		return exitUsage
	}
	return exitNotReached
}
