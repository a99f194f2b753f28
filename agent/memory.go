package agent

import (
	"context"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// memoryState is a run's use of the failure memory. STAND-IN until the
// memory package lands: memory is off.
type memoryState struct {
	shownText []string
	shownIDs  []string
	addedIDs  []string
}

func (e *Engine) openMemory(r *run) memoryState { return memoryState{} }

func (r *run) memoryReflect(ctx context.Context, iter *Iteration, rep *testrun.Report) {}

func (r *run) memoryResolve(ctx context.Context) {}
