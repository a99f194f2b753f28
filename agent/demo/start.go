package demo

import (
	"errors"

	"github.com/fixpoint-dev/fixpoint/config"
)

// Start starts the scripted demo model and points cfg.Model at it. STAND-IN
// until agent/llmtest lands.
func Start(cfg *config.Config) (stop func(), err error) {
	return nil, errors.New("the demo model is not available in this build")
}
