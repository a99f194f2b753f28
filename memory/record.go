package memory

import "time"

// Outcomes of a Record.
const (
	// OutcomeOpen: the failure has not been fixed yet (the run ended
	// unverified, or is still going).
	OutcomeOpen = "open"
	// OutcomeResolved: a later attempt in the same run went green; the
	// record carries the resolution diff and a lesson.
	OutcomeResolved = "resolved"
)

// Record is one remembered failure.
type Record struct {
	// ID is assigned by Add when empty (12 hex digits).
	ID string `json:"id"`
	// Project is the ProjectID of the project; Add fills it.
	Project  string `json:"project"`
	Language string `json:"language,omitempty"` // "go", "python", "node", ...
	TestID   string `json:"testId,omitempty"`   // the failing test, e.g. "pkg.TestParse"
	// Signature is the normalised error (see Signature). Add computes it
	// from Language and Excerpt when empty. It is what gets embedded.
	Signature string `json:"signature"`
	// Excerpt is the raw failure output (Add caps it at MaxExcerpt bytes).
	Excerpt        string `json:"excerpt,omitempty"`
	Goal           string `json:"goal,omitempty"`
	AttemptDiff    string `json:"attemptDiff,omitempty"`
	ResolutionDiff string `json:"resolutionDiff,omitempty"`
	Lesson         string `json:"lesson,omitempty"`
	// Outcome is OutcomeOpen or OutcomeResolved; Add sets OutcomeOpen when
	// empty.
	Outcome string    `json:"outcome"`
	RunID   string    `json:"runId,omitempty"`
	Created time.Time `json:"created"`
	// Updated is the last time the record was resolved or earned a hit:
	// with Hits it decides what the retention cap evicts first.
	Updated time.Time `json:"updated"`
	// Hits counts the runs that were shown this record and went green.
	Hits int `json:"hits"`
}

// MaxExcerpt is the most bytes of raw output a record keeps (the head and
// the tail are kept when it is longer).
const MaxExcerpt = 8 << 10

// Match is a recalled record and its cosine similarity to the query.
type Match struct {
	Record
	Similarity float32 `json:"similarity"`
	// Global is true when the record came from the cross-project collection.
	Global bool `json:"global,omitempty"`
}

// RecallOptions tunes Recall. The zero value returns the 3 best matches of
// any language with no similarity floor.
type RecallOptions struct {
	K         int     // matches to return; 0 means 3
	Threshold float32 // minimum cosine similarity; 0 means none (config default is 0.35)
	Language  string  // only records of this language; "" means all
}
