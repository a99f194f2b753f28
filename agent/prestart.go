package agent

import (
	"context"
	"errors"
	"fmt"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// A run starts the sessions an iteration needs ahead of their use, so that
// a session's start (a container, its build cache copied, the setup
// phase's cached install) overlaps the prompt being built and the model
// answering, and the run of the failing tests, instead of following them:
//
//   - the working session, where the iteration runs the failing tests, is
//     started at the top of the iteration (prestart), when none is open and
//     the iteration will run tests in one;
//   - the verifying session (Engine.startFresh) is started after it, by the
//     same goroutine, when none is pending; the failing tests' run starts
//     one too when none is (prestartFresh).
//
// Both are started after the baseline, so that their build caches start
// as copies of the user's cache it filled (cacheFor); on a backend that
// copies that cache when asked rather than at the start
// (sandbox.SeedDeferrer: docker), the first verifying session starts
// beside the baseline's run instead and is seeded once it has ended
// (prestartEarly), and the first iteration's working session starts
// beside the trace once the baseline's report says it will be needed,
// seeded once the trace has ended (prestartWorkEarly). They start side by
// side; on a backend that lends a fixed number of sessions (the
// benchmark's pool, LendingBackend) one goroutine starts them in turn,
// working first, so that the run never waits for the working session while
// the verifying one holds the last free session. Nothing runs in either before
// the run takes it: a verifying session taken by confirm is as fresh as
// one started then (SECURITY.md, "A fresh start"), since the model's code
// runs only in the working session, which never becomes a verifying one.

// pendingSession is a session started in the background for a later use.
// Its fields are written by its goroutine before ready closes and read
// only after.
type pendingSession struct {
	ready   chan struct{}
	setup   *project // the setup it was started with
	scripts bool     // noScripts it was started with
	sess    sandbox.Session
	done    func()
	err     error
}

func newPending(setup *project, noScripts bool) *pendingSession {
	return &pendingSession{ready: make(chan struct{}), setup: setup, scripts: noScripts}
}

// prestart starts the iteration's working session (when none is open and
// the iteration will run tests in one) and the next verifying session
// (when none is pending) in the background, in that order. It returns at
// once; the goroutine ends when the starts do (ctx ending ends them).
func (r *run) prestart(ctx context.Context) {
	var work, fresh *pendingSession
	if r.sess == nil && r.work == nil && r.runsInSession(r.cur) {
		// A working session is prepared with the scripts on
		// (startSession); after a dependency edit, resetupIfChanged opens
		// its own and this one is dropped.
		work = newPending(r.setupProj, false)
		r.work = work
	}
	if r.pending == nil {
		fresh = newPending(r.setupProj, r.setupNoScripts)
		r.pending = fresh
	}
	if work == nil && fresh == nil {
		return
	}
	e := r.e
	startWork := func() {
		if work != nil {
			work.sess, work.done, work.err = e.startSession(ctx, work.setup, nil)
			close(work.ready)
		}
	}
	startFresh := func() {
		if fresh != nil {
			fresh.sess, fresh.done, fresh.err = e.startFresh(ctx, fresh.setup, nil, fresh.scripts)
			close(fresh.ready)
		}
	}
	if l, ok := e.opts.Backend.(LendingBackend); ok && l.LendsSessions() {
		go func() {
			startWork()
			startFresh()
		}()
		return
	}
	go startWork()
	go startFresh()
}

// prestartEarly starts the run's first verifying session beside the
// baseline's run instead of after it, on a backend whose fresh sessions
// copy the user's build cache when asked rather than at their start
// (sandbox.SeedDeferrer): the session starts now, and once the baseline
// has ended (after closes) its cache is seeded from the user's cache the
// baseline filled, so that it recompiles only what the model changes, as
// one started after the baseline would. A model that answers at once (or a
// suite short enough to go straight to the verifying run, suiteShort)
// then finds it started. Nothing runs in it before the run takes it, as
// with every pending session. Not on a lending backend, where the baseline
// holds a session and one more may wait for it.
func (r *run) prestartEarly(ctx context.Context, after <-chan struct{}) {
	b := r.e.opts.Backend
	if d, ok := b.(sandbox.SeedDeferrer); !ok || !d.DefersSeed() || r.pending != nil {
		return
	}
	if l, ok := b.(LendingBackend); ok && l.LendsSessions() {
		return
	}
	p := newPending(r.setupProj, r.setupNoScripts)
	r.pending = p
	e := r.e
	go p.startSeededAfter(ctx, after, func() (sandbox.Session, func(), error) {
		return e.startFreshDeferred(ctx, p.setup, p.scripts)
	})
}

// prestartWorkEarly starts the first iteration's working session once the
// baseline's report is in, beside the trace of the failing tests, instead
// of at the top of the iteration (prestart), on the same backends as
// prestartEarly: the session starts now, and once the trace has ended
// (after closes: the trace also writes the user's build cache) its cache
// is seeded from the user's cache, as one started then would be. Only in
// fix mode with failing tests that the first iteration will run alone
// (runsInSession); nothing runs in it before the iteration takes it
// (takeWork), and it is dropped with the other pending sessions when the
// run ends first. It never verifies anything: it is the session the
// model's code runs in.
func (r *run) prestartWorkEarly(ctx context.Context, after <-chan struct{}) {
	b := r.e.opts.Backend
	if r.req.Mode != ModeFix || len(r.targets) == 0 || r.work != nil || r.sess == nil {
		return
	}
	if d, ok := b.(sandbox.SeedDeferrer); !ok || !d.DefersSeed() {
		return
	}
	if l, ok := b.(LendingBackend); ok && l.LendsSessions() {
		return
	}
	e := r.e
	e.mu.Lock()
	warm := e.warm != nil // a warm session for the run: prestart takes it
	e.mu.Unlock()
	if warm || !r.runsInSession(r.cur) {
		return
	}
	p := newPending(r.setupProj, false)
	r.work = p
	go p.startSeededAfter(ctx, after, func() (sandbox.Session, func(), error) {
		return e.startWorkDeferred(ctx, p.setup)
	})
}

// startSeededAfter starts p's session with start and, once after is
// closed, seeds its build cache from the user's (a cache the work before
// after also writes); it closes p.ready once the session is started. A
// run that ends first drops the session unseeded: its first Sync would
// seed it.
func (p *pendingSession) startSeededAfter(ctx context.Context, after <-chan struct{}, start func() (sandbox.Session, func(), error)) {
	defer close(p.ready)
	p.sess, p.done, p.err = start()
	if p.err != nil {
		return
	}
	select {
	case <-after:
	case <-ctx.Done():
		return
	}
	if s, ok := p.sess.(sandbox.BuildCacheSeeder); ok {
		s.SeedBuildCache(ctx)
	}
}

// LendingBackend is a sandbox backend whose Start lends one of a fixed
// number of sessions and waits while all are lent (the benchmark's pool,
// internal/bench/humaneval.Pool): a run starts its sessions ahead one at
// a time on it (prestart).
type LendingBackend interface {
	LendsSessions() bool
}

// runsInSession reports whether an iteration on snap runs tests in the
// working session: not in a fix whose failing tests cannot be run alone,
// where the fresh run of the whole suite is the iteration's only run
// (testPhase).
func (r *run) runsInSession(snap *sandbox.Snapshot) bool {
	if r.req.Mode != ModeFix || len(r.targets) == 0 {
		return true
	}
	_, narrow := r.selection(snap)
	return narrow
}

// prestartFresh starts the next verifying session in the background,
// unless one is already pending. The goroutine ends when the start does
// (ctx ending ends it).
func (r *run) prestartFresh(ctx context.Context) {
	if r.pending != nil {
		return
	}
	p := newPending(r.setupProj, r.setupNoScripts)
	r.pending = p
	go func() {
		defer close(p.ready)
		p.sess, p.done, p.err = r.e.startFresh(ctx, p.setup, nil, p.scripts)
	}()
}

// take waits for p's start and returns its session when it started with
// setup and noScripts; ok is false otherwise (the caller starts one), and
// a session that cannot serve is closed in the background.
func (r *run) take(p *pendingSession, setup *project, noScripts bool) (sess sandbox.Session, done func(), ok bool) {
	<-p.ready
	if p.err != nil {
		return nil, nil, false
	}
	if p.setup != setup || p.scripts != noScripts {
		r.e.closeLater(p.done)
		return nil, nil, false
	}
	return p.sess, p.done, true
}

// takeFresh returns the pending verifying session when it started with
// the run's current setup; ok is false otherwise (the caller starts one).
func (r *run) takeFresh() (sess sandbox.Session, done func(), ok bool) {
	p := r.pending
	if p == nil {
		return nil, nil, false
	}
	r.pending = nil
	return r.take(p, r.setupProj, r.setupNoScripts)
}

// takeWork returns the working session prestart started, when it serves
// the run's current setup (the scripts on: no dependency edit re-ran the
// setup phase).
func (r *run) takeWork() (sess sandbox.Session, done func(), ok bool) {
	p := r.work
	if p == nil {
		return nil, nil, false
	}
	r.work = nil
	if r.setupNoScripts {
		r.dropPending(p)
		return nil, nil, false
	}
	return r.take(p, r.setupProj, false)
}

// dropPending closes a pending session once its start ends, in the
// background (Engine.closeLater): the run does not wait for a start it no
// longer needs.
func (r *run) dropPending(p *pendingSession) {
	if p == nil {
		return
	}
	r.e.closeLater(func() {
		<-p.ready
		if p.err == nil {
			p.done()
		}
	})
}

// dropFresh drops the pending verifying and working sessions and the
// speculative run the run no longer needs.
func (r *run) dropFresh() {
	r.dropSpec(r.spec)
	r.dropPending(r.pending)
	r.dropPending(r.work)
	r.pending, r.work = nil, nil
}

// specRun is the whole suite running in the pending verifying session
// beside the run of the failing tests (speculate). Its fields are written
// by its goroutine before ready closes and read only after.
type specRun struct {
	snap   *sandbox.Snapshot // the state it runs: the iteration's
	cancel context.CancelFunc
	ready  chan struct{}
	sess   sandbox.Session // nil when no session was taken
	done   func()
	rep    *testrun.Report
	err    error
}

// speculate starts the verifying run of snap (the iteration's state) in
// the pending verifying session now, beside the run of the failing tests
// in the working session, instead of after it: when they pass, the
// verdict's run is already under way or done (confirm takes it,
// takeSpec); when they fail, it is cancelled and its session removed
// (dropSpec): it ran the model's code and never serves again.
//
// The session is the one confirm would take (nothing has run in it) and
// runs what confirm would run, on the state confirm would run it on, and
// its report comes back through the same channel; the working session is
// another container with its own build cache, so nothing the model's code
// does there reaches it. Only the order changes.
func (r *run) speculate(ctx context.Context, snap *sandbox.Snapshot) {
	p := r.pending
	if p == nil || r.spec != nil {
		return
	}
	r.pending = nil
	setup, scripts, language := r.setupProj, r.setupNoScripts, r.language
	sctx, cancel := context.WithCancel(ctx)
	s := &specRun{snap: snap, cancel: cancel, ready: make(chan struct{})}
	r.spec = s
	e := r.e
	go func() {
		defer close(s.ready)
		<-p.ready
		switch {
		case p.err != nil:
			s.err = p.err
			return
		case p.setup != setup || p.scripts != scripts:
			e.closeLater(p.done)
			s.err = errStaleSession
			return
		}
		s.sess, s.done = p.sess, p.done
		if _, err := s.sess.Sync(sctx, snap); err != nil {
			s.err = fmt.Errorf("verification sync: %w", err)
			return
		}
		s.rep, s.err = e.runTests(sctx, s.sess, language, snap, nil, true)
	}()
}

// errStaleSession: the pending session was started for another setup.
var errStaleSession = errors.New("the pending session was started for another setup")

// takeSpec returns the speculative run's session and report when it ran
// snap and finished; ok is false otherwise (it is dropped, and the caller
// runs the suite itself).
func (r *run) takeSpec(snap *sandbox.Snapshot) (sess sandbox.Session, done func(), rep *testrun.Report, ok bool) {
	s := r.spec
	if s == nil {
		return nil, nil, nil, false
	}
	r.spec = nil
	if s.snap != snap {
		r.dropSpec(s)
		return nil, nil, nil, false
	}
	<-s.ready
	if s.err != nil {
		r.e.log.Debug("the verifying run started beside the failing tests did not finish; running it again", "err", s.err)
		r.dropSpec(s)
		return nil, nil, nil, false
	}
	s.cancel()
	return s.sess, s.done, s.rep, true
}

// dropSpec cancels a speculative run and removes its session in the
// background.
func (r *run) dropSpec(s *specRun) {
	if s == nil {
		return
	}
	if r.spec == s {
		r.spec = nil
	}
	r.res.CancelledRuns++
	s.cancel()
	r.e.closeLater(func() {
		<-s.ready
		if s.done != nil {
			s.done()
		}
	})
}
