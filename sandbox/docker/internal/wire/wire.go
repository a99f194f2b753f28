// Package wire is the framed protocol between fixpoint and the sandbox
// supervisor that runs as a container's entrypoint.
//
// A [Frame] is one type byte, a big-endian uint32 payload length and the
// payload. fixpoint writes frames to the container's attached stdin and reads
// them from its stdout; the supervisor's stderr is only for its own log.
// The package is standard library only, because the supervisor is a static
// binary built from it.
//
// One request is in flight at a time, except [Kill], which may arrive while a
// [Run] is running. Replies:
//
//	Run      -> Stdout/Stderr chunks ... then Exit (or Error)
//	Manifest -> Need, then the host sends TarChunk ... TarEnd -> Synced (or Error)
//	Read     -> Data (or Error)
//	Changes  -> Diff
//	Ping     -> Pong
//
// At start-up the supervisor sends Ready with its [Version].
package wire

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
)

// Version changes whenever the protocol changes.
const Version = "fixpoint-supervisor/1"

// Frame types, host to supervisor.
const (
	Run      byte = 'r' // payload RunRequest JSON
	Kill     byte = 'k' // kill the running command's processes; no reply of its own
	Manifest byte = 'm' // payload ManifestRequest JSON
	TarChunk byte = 't' // part of a tar stream of files to write
	TarEnd   byte = 'T' // end of the tar stream
	Read     byte = 'f' // payload: workspace-relative path
	Changes  byte = 'c' // payload ChangesRequest JSON
	Ping     byte = 'p'
)

// Frame types, supervisor to host.
const (
	Ready  byte = 'R' // payload: Version
	Stdout byte = '1' // output chunk
	Stderr byte = '2' // output chunk
	Exit   byte = 'x' // payload ExitStatus JSON
	Need   byte = 'n' // payload NeedReply JSON
	Synced byte = 's' // payload SyncReply JSON
	Data   byte = 'd' // file contents
	Diff   byte = 'D' // payload ChangesReply JSON
	Error  byte = 'e' // payload: error message
	Pong   byte = 'P'
)

// MaxPayload bounds one frame so a broken peer cannot make the reader
// allocate without limit.
const MaxPayload = 8 << 20

// ChunkSize is the size of output and tar chunks.
const ChunkSize = 32 << 10

// Frame is one message.
type Frame struct {
	Type    byte
	Payload []byte
}

// Write writes one frame.
func Write(w io.Writer, typ byte, payload []byte) error {
	var hdr [5]byte
	hdr[0] = typ
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(payload)))
	if len(payload) < 4096 {
		buf := make([]byte, 0, 5+len(payload))
		buf = append(append(buf, hdr[:]...), payload...)
		_, err := w.Write(buf)
		return err
	}
	if _, err := w.Write(hdr[:]); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// WriteJSON writes v as the JSON payload of a frame.
func WriteJSON(w io.Writer, typ byte, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return Write(w, typ, b)
}

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (Frame, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return Frame{}, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxPayload {
		return Frame{}, fmt.Errorf("frame %q of %d bytes exceeds %d", hdr[0], n, MaxPayload)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return Frame{}, fmt.Errorf("frame %q: %w", hdr[0], err)
	}
	return Frame{Type: hdr[0], Payload: p}, nil
}

// RunRequest runs one command. Zero limits mean "no limit" here: the host
// fills in its defaults before sending.
type RunRequest struct {
	Args      []string `json:"args"`
	Dir       string   `json:"dir,omitempty"` // workspace-relative
	Env       []string `json:"env,omitempty"` // full environment of the command
	Stdin     []byte   `json:"stdin,omitempty"`
	TimeoutMS int64    `json:"timeout_ms,omitempty"`
	CPUSec    int64    `json:"cpu_sec,omitempty"`
	FileSize  int64    `json:"fsize,omitempty"`
	NoFile    int64    `json:"nofile,omitempty"`
	NProc     int64    `json:"nproc,omitempty"`
	OutputCap int64    `json:"output_cap,omitempty"` // per stream
}

// ExitStatus ends a Run.
type ExitStatus struct {
	Code       int   `json:"code"`
	Signal     int   `json:"signal,omitempty"`
	TimedOut   bool  `json:"timed_out,omitempty"`
	CPULimit   bool  `json:"cpu_limit,omitempty"`
	OOMKilled  bool  `json:"oom_killed,omitempty"`
	Truncated  bool  `json:"truncated,omitempty"`
	DurationNS int64 `json:"duration_ns"`
	Leftover   int   `json:"leftover,omitempty"` // processes killed after the command exited
}

// FileEntry is one file of a manifest.
type FileEntry struct {
	Path string `json:"p"`
	Hash string `json:"h"` // hex sha256 of the contents
	Mode uint32 `json:"m"`
}

// ManifestRequest lists every file the workspace must hold. A large
// manifest is split over several frames: all but the last set More.
type ManifestRequest struct {
	Files []FileEntry `json:"files"`
	More  bool        `json:"more,omitempty"`
}

// NeedReply names the manifest paths whose contents the supervisor lacks.
// Files the supervisor wrote earlier and that are no longer in the manifest
// have already been deleted. A long reply is split over several frames:
// all but the last set More.
type NeedReply struct {
	Paths   []string `json:"paths"`
	Deleted int      `json:"deleted"`
	More    bool     `json:"more,omitempty"`
}

// ManifestBatch is how many entries one Manifest or Need frame carries.
const ManifestBatch = 10000

// SyncReply ends a sync.
type SyncReply struct {
	Written int   `json:"written"`
	Bytes   int64 `json:"bytes"`
}

// TruncationMarker is appended to a stream cut at its output cap.
func TruncationMarker(limit int64) string {
	return fmt.Sprintf("\n[fixpoint: output truncated after %d bytes]\n", limit)
}

// ChangesRequest asks which workspace files differ from what the last
// sync wrote. Directories named in Skip are not entered.
type ChangesRequest struct {
	Skip []string `json:"skip,omitempty"`
}

// ChangesReply lists workspace-relative paths, sorted.
type ChangesReply struct {
	Modified  []string `json:"modified"`  // synced files whose contents or mode changed
	Created   []string `json:"created"`   // regular files the last sync did not write
	Deleted   []string `json:"deleted"`   // synced files that are gone
	Truncated bool     `json:"truncated"` // more than MaxChanges paths; the lists are cut
}

// MaxChanges bounds the paths of one ChangesReply.
const MaxChanges = 20000
