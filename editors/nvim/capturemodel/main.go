// Command capturemodel serves fixpoint's scripted demo model (agent/demo)
// for capture.sh, so that a recorded Neovim run needs no real model. It
// prints the base URL and the model name, one per line, then serves until
// its stdin closes.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/config"
)

func main() {
	cfg := config.Defaults(os.Getenv)
	stop, err := demo.Start(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "capturemodel:", err)
		os.Exit(1)
	}
	defer stop()
	fmt.Println(cfg.Model.BaseURL)
	fmt.Println(cfg.Model.Name)
	_, _ = io.Copy(io.Discard, os.Stdin)
}
