package server

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
)

// No model configured. `fixpoint serve` behaves like the CLI: its engine
// factory gives a folder without a configured model the bundled scripted
// demo model (agent/demo), and says so through DemoModel. The server then
// shows the banner once, visibly (window/showMessage), with where the
// settings and the key go, and every run's status says "demo model".
// A goal (Solve) is refused with the same directions, as the CLI's solve
// refuses it: the demo knows one fix and no goal.

// demoModeler is implemented by engines that run the scripted demo model
// instead of a configured one.
type demoModeler interface {
	DemoModel() bool
}

// noModelHelp says where the model settings and the key go.
const noModelHelp = "Set fixpoint.baseUrl and fixpoint.model in your editor's user settings " +
	"(or FIXPOINT_BASE_URL and FIXPOINT_MODEL, or [model] in ~/.config/fixpoint/config.toml); " +
	"the API key goes in FIXPOINT_API_KEY in the environment the editor starts fixpoint from " +
	"(VS Code: Fixpoint: Set API Key), never in a workspace file."

// demoStatus is the suffix of a demo run's title.
const demoStatus = " · demo model"

// noModel handles a fix or solve run whose engine runs the demo model: it
// shows the banner once per server and marks the run's title, or ends a
// solve run with the directions. It reports whether r has ended.
func (s *Server) noModel(ctx context.Context, r *run, eng Engine) bool {
	d, ok := eng.(demoModeler)
	if !ok || !d.DemoModel() {
		return false
	}
	if r.kind.mode() == agent.ModeSolve {
		s.showMessage(ctx, protocol.MessageTypeError, "fixpoint: no model configured, so it cannot solve a goal. "+noModelHelp)
		s.endStatus(ctx, r, stateFailed, "No model configured: set fixpoint.baseUrl and fixpoint.model", "no model configured")
		return true
	}
	r.title += demoStatus
	r.status.Message = r.title
	s.sendStatus(ctx, r)
	s.mu.Lock()
	first := !s.demoShown
	s.demoShown = true
	s.mu.Unlock()
	if first {
		s.showMessage(ctx, protocol.MessageTypeWarning, "fixpoint: no model configured: running the bundled scripted demo model, "+
			"which shows fixpoint's machinery, not a model's skill, and only knows examples/go-bug. "+noModelHelp)
	}
	return false
}

// No Docker. With sandbox.backend unset, an engine that finds no Docker
// engine uses bubblewrap. The user is told once per server, visibly, with
// the fix for their system (not a script of this repository), and that the
// first run compiles the language's standard library into a cache.

// sandboxNamer is implemented by engines that say which sandbox backend
// answered (*agent.Engine).
type sandboxNamer interface {
	SandboxName() string
}

// noDockerHelp is the notice shown when the automatic choice fell back
// to bwrap.
const noDockerHelp = "fixpoint: no Docker engine answers, so tests run in the bubblewrap (bwrap) sandbox. " +
	"To use Docker: sudo apt-get install docker.io && sudo systemctl enable --now docker, " +
	"then sudo usermod -aG docker $USER and log in again (other systems: install Docker Engine or Docker Desktop and start it). " +
	"To keep bwrap, set fixpoint.sandbox (FIXPOINT_SANDBOX) to \"bwrap\" and this notice goes. " +
	"The first run compiles the standard library into a cache, which can take a few minutes."

// noticeSandbox shows noDockerHelp once when root's engine fell back to
// bwrap because sandbox.backend is unset and no Docker engine answered.
func (s *Server) noticeSandbox(ctx context.Context, chosen string, eng Engine) {
	sn, ok := eng.(sandboxNamer)
	if !ok || chosen != "" || sn.SandboxName() != config.BackendBwrap {
		return
	}
	s.mu.Lock()
	first := !s.bwrapShown
	s.bwrapShown = true
	s.mu.Unlock()
	if first {
		s.showMessage(ctx, protocol.MessageTypeWarning, noDockerHelp)
	}
}
