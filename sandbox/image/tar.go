package image

import (
	"archive/tar"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// tree is one host directory copied into the image under Dst.
type tree struct {
	Src string // host directory
	Dst string // path in the image, without leading slash ("" = root)
	// Skip, when non-nil, drops entries by their path relative to Src
	// (slash-separated); a skipped directory is not entered.
	Skip func(rel string) bool
	// Root makes every entry owned by 0:0 (for trees copied from a user's
	// GOROOT).
	Root bool
	// Own makes every entry owned by the sandbox user (UID:GID), for trees
	// the sandbox must be able to write, like the Go build cache.
	Own bool
}

// entry is a synthetic file or directory added to the image; it replaces a
// tree entry of the same name.
type entry struct {
	Name     string // without leading slash
	Mode     int64  // permission bits
	Dir      bool
	UID, GID int
	Data     []byte
}

// writeTar writes trees and then entries to w as one tar stream, in a
// deterministic order (WalkDir is lexical). Hard links within one tree are
// kept as links.
func writeTar(w io.Writer, trees []tree, entries []entry) error {
	tw := tar.NewWriter(w)
	override := map[string]bool{}
	for _, e := range entries {
		override[e.Name] = true
	}
	for _, t := range trees {
		if err := writeTree(tw, t, override); err != nil {
			return err
		}
	}
	for _, e := range entries {
		hdr := &tar.Header{Name: e.Name, Mode: e.Mode, Uid: e.UID, Gid: e.GID, Format: tar.FormatPAX}
		if e.Dir {
			hdr.Typeflag, hdr.Name = tar.TypeDir, e.Name+"/"
		} else {
			hdr.Typeflag, hdr.Size = tar.TypeReg, int64(len(e.Data))
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s: %w", e.Name, err)
		}
		if _, err := tw.Write(e.Data); err != nil {
			return fmt.Errorf("write %s: %w", e.Name, err)
		}
	}
	return tw.Close()
}

type inode struct{ dev, ino uint64 }

func writeTree(tw *tar.Writer, t tree, override map[string]bool) error {
	links := map[inode]string{}
	return filepath.WalkDir(t.Src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(t.Src, p)
		rel = filepath.ToSlash(rel)
		if rel != "." && t.Skip != nil && t.Skip(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		name := path.Join(t.Dst, rel)
		if name == "." || name == "" {
			return nil // the image root itself
		}
		if override[name] {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		var target string
		if info.Mode()&fs.ModeSymlink != 0 {
			if target, err = os.Readlink(p); err != nil {
				return err
			}
		}
		hdr, err := tar.FileInfoHeader(info, target)
		if err != nil {
			return fmt.Errorf("tar header %s: %w", p, err)
		}
		hdr.Name, hdr.Uname, hdr.Gname, hdr.Format = name, "", "", tar.FormatPAX
		if d.IsDir() {
			hdr.Name += "/"
		}
		if t.Root {
			hdr.Uid, hdr.Gid = 0, 0
		}
		if t.Own {
			hdr.Uid, hdr.Gid = UID, GID
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && info.Mode().IsRegular() && st.Nlink > 1 {
			key := inode{uint64(st.Dev), uint64(st.Ino)}
			if first, seen := links[key]; seen {
				hdr.Typeflag, hdr.Linkname, hdr.Size = tar.TypeLink, first, 0
				return tw.WriteHeader(hdr)
			}
			links[key] = name
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(tw, f); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		return nil
	})
}

// skipRootfs drops what an image does not need from a debootstrapped tree:
// package caches, apt lists, manuals and docs (copyright files are kept).
func skipRootfs(rel string) bool {
	switch rel {
	case "var/cache/apt/archives", "var/lib/apt/lists", "usr/share/man", "usr/share/info",
		"debootstrap", "proc", "sys", "dev/pts":
		return false // the directories themselves stay; see below
	}
	for _, dir := range []string{"var/cache/apt/archives/", "var/lib/apt/lists/", "usr/share/man/", "usr/share/info/", "debootstrap/"} {
		if strings.HasPrefix(rel, dir) {
			return true
		}
	}
	if strings.HasPrefix(rel, "usr/share/doc/") {
		parts := strings.Split(rel, "/")
		return len(parts) > 5 || (len(parts) == 5 && parts[4] != "copyright")
	}
	return false
}

// skipGoRoot drops the parts of a GOROOT a sandbox never uses.
func skipGoRoot(rel string) bool {
	switch {
	case rel == ".git", rel == "test", rel == "doc", rel == "pkg/obj", rel == "api":
		return true
	}
	return false
}
