package slow

import (
	"testing"
	"time"
)

func TestFast(t *testing.T) {}

func TestSlow(t *testing.T) {
	t.Log("starting a slow operation")
	time.Sleep(time.Hour)
}
