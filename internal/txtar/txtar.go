// Package txtar reads and writes the minimal txtar archives of the golden
// and transcript tests: a comment, then "-- name --" sections.
package txtar

import (
	"fmt"
	"strings"
)

// Archive is a comment and its sections, in order.
type Archive struct {
	Comment string
	Files   []File
}

// File is one "-- name --" section.
type File struct{ Name, Data string }

// Parse reads s. Text before the first section is the comment.
func Parse(s string) *Archive {
	a := &Archive{}
	cur := -1
	for _, line := range strings.SplitAfter(s, "\n") {
		t := strings.TrimRight(line, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			a.Files = append(a.Files, File{Name: strings.TrimSpace(t[3 : len(t)-3])})
			cur = len(a.Files) - 1
			continue
		}
		if cur < 0 {
			a.Comment += line
		} else {
			a.Files[cur].Data += line
		}
	}
	return a
}

// Format writes a back; Parse(a.Format()) equals a when every section ends
// in a newline.
func (a *Archive) Format() string {
	var b strings.Builder
	b.WriteString(a.Comment)
	for _, f := range a.Files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.Name, f.Data)
		if f.Data != "" && !strings.HasSuffix(f.Data, "\n") {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// Get returns the data of the first section called name.
func (a *Archive) Get(name string) (string, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return f.Data, true
		}
	}
	return "", false
}

// Set replaces the data of the section called name, or appends it.
func (a *Archive) Set(name, data string) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = data
			return
		}
	}
	a.Files = append(a.Files, File{name, data})
}
