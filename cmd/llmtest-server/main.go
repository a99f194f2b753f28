// Command llmtest-server runs the scripted OpenAI-compatible server of
// package agent/llmtest as a process, for end-to-end tests that need one
// (the editor tests).
//
//	llmtest-server --script script.json [--addr 127.0.0.1:0]
//
// The first line of stdout is the base URL, ending in /v1. The server runs
// until it receives SIGINT or SIGTERM or its stdin closes (unless
// --watch-stdin=false, for a stdin of /dev/null). With --script
// omitted it answers every request with "ok". Logs go to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run serves until ctx ends or stdin reaches EOF. It returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("llmtest-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "JSON script file (see agent/llmtest/README.md); empty = always answer \"ok\"")
	addr := fs.String("addr", "127.0.0.1:0", "listen address")
	watchStdin := fs.Bool("watch-stdin", true, "exit when stdin closes (pass false when stdin is /dev/null)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "llmtest-server: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	s := &llmtest.Script{Default: &llmtest.Reply{Content: "ok"}}
	if *script != "" {
		var err error
		if s, err = llmtest.LoadScript(*script); err != nil {
			fmt.Fprintf(stderr, "llmtest-server: --script: %v\n", err)
			return 2
		}
	}
	srv, err := llmtest.Listen(*addr, s)
	if err != nil {
		fmt.Fprintf(stderr, "llmtest-server: --addr: %v\n", err)
		return 2
	}
	defer srv.Close()
	fmt.Fprintln(stdout, srv.URL())

	eof := make(chan struct{})
	if *watchStdin {
		go func() { // exits when stdin closes; the process then exits too
			io.Copy(io.Discard, stdin)
			close(eof)
		}()
	}
	select {
	case <-ctx.Done():
	case <-eof:
	}
	fmt.Fprintf(stderr, "llmtest-server: served %d requests\n", len(srv.Requests()))
	return 0
}
