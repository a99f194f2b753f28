package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"
)

// ErrUntrusted marks a workspace .fixpoint.toml that sets user-only keys
// without a matching trust record. Errors that wrap it also wrap
// ErrInvalid (exit code 2).
var ErrUntrusted = errors.New("untrusted workspace configuration")

// TrustRecord is the user's trust in one workspace folder, like direnv's
// allow. Folder trust (the record exists) lets the language server prepare
// the folder's sandbox on its own: install its dependencies and run its
// tests before the user asks. Config trust (ConfigSHA256 set) lets the
// user-only keys of the folder's .fixpoint.toml apply while the file's
// content hashes to ConfigSHA256; any change is refused again.
type TrustRecord struct {
	// Dir is the folder's absolute path, symbolic links resolved.
	Dir string `json:"dir"`
	// ConfigSHA256 is the hex SHA-256 of the .fixpoint.toml the user
	// trusted; "" when only the folder is trusted (the editor's prompt),
	// or when the folder had no .fixpoint.toml then.
	ConfigSHA256 string    `json:"config_sha256,omitempty"`
	TrustedAt    time.Time `json:"trusted_at"`
}

// TrustStore keeps trust records in Dir, one 0600 file per folder in a
// 0700 directory. A record the user does not own, or that others may
// write, counts as absent.
type TrustStore struct {
	Dir string
}

// DefaultTrustDir is $XDG_CONFIG_HOME/fixpoint/trust or
// ~/.config/fixpoint/trust ("" when neither is known).
func DefaultTrustDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "fixpoint", "trust")
	}
	home := getenv("HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "fixpoint", "trust")
}

// CanonicalDir is the form of a folder path that records are keyed by:
// absolute, cleaned, symbolic links resolved when it exists.
func CanonicalDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real, nil
	}
	return abs, nil
}

func (t TrustStore) path(dir string) string {
	h := sha256.Sum256([]byte(dir))
	return filepath.Join(t.Dir, hex.EncodeToString(h[:16])+".json")
}

// Lookup returns dir's record, or nil when there is none.
func (t TrustStore) Lookup(dir string) (*TrustRecord, error) {
	if t.Dir == "" {
		return nil, nil
	}
	dir, err := CanonicalDir(dir)
	if err != nil {
		return nil, err
	}
	rec, err := t.read(t.path(dir))
	if rec == nil || err != nil || rec.Dir != dir {
		return nil, err
	}
	return rec, nil
}

// read reads one record file; nil when it is absent or not safe to believe.
func (t TrustStore) read(path string) (*TrustRecord, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !privateToMe(f) {
		return nil, nil
	}
	var rec TrustRecord
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		return nil, nil // a broken record trusts nothing
	}
	return &rec, nil
}

// privateToMe reports whether f is a regular file of this user that
// nobody else may write.
func privateToMe(f *os.File) bool {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Mode().Perm()&0o022 != 0 {
		return false
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	return !ok || int(sys.Uid) == os.Getuid()
}

// TrustFolder records folder trust for dir, keeping a config trust
// already recorded.
func (t TrustStore) TrustFolder(dir string) (*TrustRecord, error) {
	dir, err := CanonicalDir(dir)
	if err != nil {
		return nil, err
	}
	rec, err := t.Lookup(dir)
	if err != nil {
		return nil, err
	}
	if rec == nil {
		rec = &TrustRecord{Dir: dir}
	}
	rec.TrustedAt = time.Now().UTC()
	return rec, t.write(rec)
}

// TrustConfig records folder trust for dir and config trust for the
// current content of its .fixpoint.toml.
func (t TrustStore) TrustConfig(dir string) (*TrustRecord, error) {
	dir, err := CanonicalDir(dir)
	if err != nil {
		return nil, err
	}
	rec := &TrustRecord{Dir: dir, TrustedAt: time.Now().UTC()}
	data, err := os.ReadFile(filepath.Join(dir, ProjectFile))
	switch {
	case err == nil:
		rec.ConfigSHA256 = contentHash(data)
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}
	return rec, t.write(rec)
}

func (t TrustStore) write(rec *TrustRecord) error {
	if t.Dir == "" {
		return errors.New("no directory for trust records: set HOME or XDG_CONFIG_HOME")
	}
	if err := os.MkdirAll(t.Dir, 0o700); err != nil {
		return err
	}
	if err := os.Chmod(t.Dir, 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(t.Dir, ".record-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil { // CreateTemp makes it 0600
		return err
	}
	return os.Rename(tmp.Name(), t.path(rec.Dir))
}

// Revoke removes dir's record; it reports whether there was one.
func (t TrustStore) Revoke(dir string) (bool, error) {
	if t.Dir == "" {
		return false, nil
	}
	dir, err := CanonicalDir(dir)
	if err != nil {
		return false, err
	}
	err = os.Remove(t.path(dir))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// List returns every record, by folder.
func (t TrustStore) List() ([]TrustRecord, error) {
	if t.Dir == "" {
		return nil, nil
	}
	files, err := filepath.Glob(filepath.Join(t.Dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []TrustRecord
	for _, f := range files {
		if rec, err := t.read(f); err == nil && rec != nil && t.path(rec.Dir) == f {
			out = append(out, *rec)
		}
	}
	slices.SortFunc(out, func(a, b TrustRecord) int {
		switch {
		case a.Dir < b.Dir:
			return -1
		case a.Dir > b.Dir:
			return 1
		}
		return 0
	})
	return out, nil
}

func contentHash(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// checkProjectTrust refuses a project file that sets user-only keys
// unless the user trusted its exact content.
func (t TrustStore) checkProjectTrust(root, file string, data []byte) error {
	keys, err := UserOnlySet(data)
	if err != nil || len(keys) == 0 {
		return nil // a syntax error is reported by the decoder, with its line
	}
	rec, err := t.Lookup(root)
	if err != nil {
		return fmt.Errorf("%w: read the trust record of %s: %v", ErrInvalid, root, err)
	}
	dir, _ := CanonicalDir(root)
	switch {
	case rec == nil || rec.ConfigSHA256 == "":
		return untrustedError(file, dir, keys, nil)
	case rec.ConfigSHA256 != contentHash(data):
		return untrustedError(file, dir, keys, rec)
	}
	return nil
}
