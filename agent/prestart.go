package agent

import (
	"context"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// pendingFresh is a verifying session (Engine.startFresh) started in the
// background while an iteration runs the failing tests, so that its start
// (a container, its build cache copied) overlaps that run instead of
// following it. Nothing runs in it before confirm takes it: it is as fresh
// as one started then. Its fields are written by its goroutine before
// ready closes and read only after.
type pendingFresh struct {
	ready   chan struct{}
	setup   *project // the setup it was started with
	scripts bool     // noScripts it was started with
	sess    sandbox.Session
	done    func()
	err     error
}

// prestartFresh starts the next verifying session in the background,
// unless one is already pending. The goroutine ends when the start does
// (ctx ending ends it).
func (r *run) prestartFresh(ctx context.Context) {
	if r.pending != nil {
		return
	}
	p := &pendingFresh{ready: make(chan struct{}), setup: r.setupProj, scripts: r.setupNoScripts}
	r.pending = p
	go func() {
		defer close(p.ready)
		p.sess, p.done, p.err = r.e.startFresh(ctx, p.setup, nil, p.scripts)
	}()
}

// takeFresh returns the pending verifying session when it started with
// the run's current setup; ok is false otherwise (the caller starts one),
// and a pending session that cannot serve is closed.
func (r *run) takeFresh() (sess sandbox.Session, done func(), ok bool) {
	p := r.pending
	if p == nil {
		return nil, nil, false
	}
	r.pending = nil
	<-p.ready
	if p.err != nil {
		return nil, nil, false
	}
	if p.setup != r.setupProj || p.scripts != r.setupNoScripts {
		p.done()
		return nil, nil, false
	}
	return p.sess, p.done, true
}

// dropFresh closes a pending verifying session the run no longer needs.
func (r *run) dropFresh() {
	if _, done, ok := r.takeFresh(); ok {
		done()
	}
}
