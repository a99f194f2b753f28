package agent

import (
	"errors"
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// STAND-IN until agent/edit lands.
type editBlock struct {
	Path, Search, Replace string
	Index                 int
}

func parseEdits(reply string) ([]editBlock, error) {
	lines := strings.Split(reply, "\n")
	var out []editBlock
	for i := 0; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) != "<<<<<<< SEARCH" {
			continue
		}
		p := ""
		for k := i - 1; k >= 0; k-- {
			s := strings.TrimSpace(lines[k])
			if s == "" || strings.HasPrefix(s, "```") {
				continue
			}
			p = strings.Trim(s, "`*: ")
			break
		}
		var search, repl []string
		j := i + 1
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "======="; j++ {
			search = append(search, lines[j])
		}
		k := j + 1
		for ; k < len(lines) && strings.TrimSpace(lines[k]) != ">>>>>>> REPLACE"; k++ {
			repl = append(repl, lines[k])
		}
		if j >= len(lines) || k >= len(lines) {
			return out, fmt.Errorf("block %d for %s is not terminated", len(out)+1, p)
		}
		b := editBlock{Path: p, Index: len(out), Search: strings.Join(search, "\n"), Replace: strings.Join(repl, "\n")}
		if len(search) > 0 {
			b.Search += "\n"
		}
		if len(repl) > 0 {
			b.Replace += "\n"
		}
		out = append(out, b)
		i = k
	}
	return out, nil
}

func applyEdits(snap *sandbox.Snapshot, blocks []editBlock) (map[string][]byte, error) {
	changed := map[string][]byte{}
	for _, b := range blocks {
		p, err := sandbox.CleanRel(b.Path)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", b.Index+1, err)
		}
		cur, ok := changed[p]
		if !ok {
			if f, exists := snap.Files[p]; exists {
				cur = f.Data
			}
		}
		if b.Search == "" {
			if cur != nil {
				return nil, fmt.Errorf("block %d: %s exists; an empty SEARCH only creates files", b.Index+1, p)
			}
			changed[p] = []byte(b.Replace)
			continue
		}
		s := string(cur)
		switch n := strings.Count(s, b.Search); {
		case n == 0:
			return nil, fmt.Errorf("block %d: the SEARCH text does not match anything in %s", b.Index+1, p)
		case n > 1:
			return nil, fmt.Errorf("block %d: the SEARCH text matches %d places in %s", b.Index+1, n, p)
		}
		changed[p] = []byte(strings.Replace(s, b.Search, b.Replace, 1))
	}
	if len(changed) == 0 {
		return nil, errors.New("no edits")
	}
	return changed, nil
}
