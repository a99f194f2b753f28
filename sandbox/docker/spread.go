package docker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// Spread starts sessions on several engines in turn (round robin), e.g. a
// laptop's engine and a shared build host's (`fixpoint bench humaneval
// --engines A,B`). Each engine needs the sandbox images itself. It is safe
// for concurrent use.
type Spread struct {
	hosts    []string
	backends []*Backend
	clients  []*client.Client

	mu      sync.Mutex
	next    int
	started []int
}

// NewSpread connects to every engine address (unix://, tcp:// with the
// DOCKER_TLS_VERIFY/DOCKER_CERT_PATH settings, ssh://) with opts (its
// Client is ignored) and fails if any of them does not answer.
func NewSpread(ctx context.Context, hosts []string, opts *Options) (*Spread, error) {
	if len(hosts) == 0 {
		return nil, errors.New("docker sandbox: no engine addresses")
	}
	s := &Spread{hosts: hosts, started: make([]int, len(hosts))}
	for _, h := range hosts {
		cli, err := engine.ForHost(h)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("engine %s: %w: %w", h, sandbox.ErrUnavailable, err)
		}
		o := Options{}
		if opts != nil {
			o = *opts
		}
		o.Client = cli
		b, err := New(ctx, &o)
		if err != nil {
			cli.Close()
			s.Close()
			return nil, fmt.Errorf("engine %s: %w", h, err)
		}
		s.backends = append(s.backends, b)
		s.clients = append(s.clients, cli)
	}
	return s, nil
}

// Name returns "docker".
func (s *Spread) Name() string { return "docker" }

// DefersSeed implements sandbox.SeedDeferrer: its sessions are the
// engines' (Backend.DefersSeed).
func (s *Spread) DefersSeed() bool { return true }

// Start starts a session on the next engine in turn.
func (s *Spread) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s.mu.Lock()
	i := s.next
	s.next = (s.next + 1) % len(s.backends)
	s.mu.Unlock()
	sess, err := s.backends[i].Start(ctx, spec)
	if err != nil {
		return nil, fmt.Errorf("engine %s: %w", s.hosts[i], err)
	}
	s.mu.Lock()
	s.started[i]++
	s.mu.Unlock()
	return sess, nil
}

// Started returns how many sessions each engine address has started.
func (s *Spread) Started() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := map[string]int{}
	for i, h := range s.hosts {
		m[h] += s.started[i]
	}
	return m
}

// Close closes every backend and its client.
func (s *Spread) Close() error {
	var errs []error
	for _, b := range s.backends {
		errs = append(errs, b.Close())
	}
	for _, c := range s.clients {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}
