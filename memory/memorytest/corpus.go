// Package memorytest holds the labelled failure corpus that tests and the
// memory benchmark (internal/bench/recall) measure retrieval with: real Go,
// Python and Node failure outputs, paired by root cause ([Corpus]).
package memorytest

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// errorCorpus holds real Go, Python and Node failure outputs: for each root
// cause two variants (NAME.a.txt, NAME.b.txt) that differ in file names,
// identifiers and values, and distractors (NAME.x.txt) that have no pair.
// memory/testdata/gen/gen.py regenerates them.
//
//go:embed testdata/errors/*.txt
var errorCorpus embed.FS

// Pair is one labelled retrieval case: Query should recall Want.
type Pair struct {
	Case     string // e.g. "go-nil-map"
	Language string
	Stored   string // raw output stored in memory (variant a)
	Query    string // raw output of the same root cause (variant b)
}

// Corpus returns the labelled pairs and the distractors (raw outputs with
// their language) shipped with the package.
func Corpus() (pairs []Pair, distractors []Pair, err error) {
	files, err := fs.Glob(errorCorpus, "testdata/errors/*.txt")
	if err != nil {
		return nil, nil, err
	}
	byCase := map[string]*Pair{}
	var cases []string
	for _, f := range files {
		base := path.Base(f)
		name, variant, _ := strings.Cut(strings.TrimSuffix(base, ".txt"), ".")
		b, err := fs.ReadFile(errorCorpus, f)
		if err != nil {
			return nil, nil, err
		}
		p := byCase[name]
		if p == nil {
			lang, _, _ := strings.Cut(name, "-")
			p = &Pair{Case: name, Language: lang}
			byCase[name] = p
			cases = append(cases, name)
		}
		switch variant {
		case "a", "x":
			p.Stored = string(b)
		case "b":
			p.Query = string(b)
		}
	}
	sort.Strings(cases)
	for _, c := range cases {
		p := byCase[c]
		if p.Query == "" {
			distractors = append(distractors, *p)
		} else {
			pairs = append(pairs, *p)
		}
	}
	return pairs, distractors, nil
}
