package memory

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
)

// The vector cache (vectors.bin) spares Open from re-embedding every
// record with the local embedder. It is derived data, never the source of
// truth: a vector is used only when the embedder name matches and the hash
// of the record's embedded text is the same; a cache that fails to decode
// is ignored as a whole. It is rewritten (temp file, fsync, rename) after an
// open or a compaction that had to embed many records.
//
// Format: "fpvc1\n", embedder name (uvarint length + bytes), dims
// (uvarint), then per record: id (uvarint length + bytes), 8-byte FNV-1a of
// the embedded text, dims little-endian float32.

const (
	vcacheName  = "vectors.bin"
	vcacheMagic = "fpvc1\n"
	// vcacheMin is how many records an open or compaction must have
	// embedded before the cache is rewritten.
	vcacheMin = 256
)

type cachedVec struct {
	textHash uint64
	vec      []float32
}

func textHash(s string) uint64 { return fnvHash('t', s, "") }

func readVCache(dir, embedder string) map[string]cachedVec {
	f, err := os.Open(filepath.Join(dir, vcacheName))
	if err != nil {
		return nil
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	m, err := decodeVCache(r, embedder)
	if err != nil {
		return nil
	}
	return m
}

func decodeVCache(r *bufio.Reader, embedder string) (map[string]cachedVec, error) {
	magic := make([]byte, len(vcacheMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != vcacheMagic {
		return nil, errors.New("bad magic")
	}
	name, err := readString(r)
	if err != nil || name != embedder {
		return nil, errors.New("other embedder")
	}
	dims, err := binary.ReadUvarint(r)
	if err != nil || dims == 0 || dims > 1<<16 {
		return nil, errors.New("bad dims")
	}
	m := map[string]cachedVec{}
	buf := make([]byte, 8+4*dims)
	for {
		id, err := readString(r)
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return nil, err
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		v := make([]float32, dims)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[8+4*i:]))
		}
		m[id] = cachedVec{binary.LittleEndian.Uint64(buf), v}
	}
}

func readString(r *bufio.Reader) (string, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		return "", err
	}
	if n > 1<<16 {
		return "", errors.New("string too long")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", io.ErrUnexpectedEOF
	}
	return string(b), nil
}

// writeVCacheLocked writes the vectors of all records. c.mu is held.
func (c *collection) writeVCacheLocked() error {
	ids := make([]string, 0, len(c.recs))
	dims := 0
	for id := range c.recs {
		if v := c.vecs[id]; v != nil {
			ids = append(ids, id)
			dims = len(v)
		}
	}
	sort.Strings(ids)
	var b bytes.Buffer
	b.WriteString(vcacheMagic)
	b.Write(binary.AppendUvarint(nil, uint64(len(c.emb.Name()))))
	b.WriteString(c.emb.Name())
	b.Write(binary.AppendUvarint(nil, uint64(dims)))
	rec := make([]byte, 8+4*dims)
	for _, id := range ids {
		v := c.vecs[id]
		if len(v) != dims {
			continue
		}
		b.Write(binary.AppendUvarint(nil, uint64(len(id))))
		b.WriteString(id)
		binary.LittleEndian.PutUint64(rec, textHash(embedText(c.recs[id])))
		for i, x := range v {
			binary.LittleEndian.PutUint32(rec[8+4*i:], math.Float32bits(x))
		}
		b.Write(rec)
	}
	if err := writeFileAtomic(filepath.Join(c.dir, vcacheName), b.Bytes()); err != nil {
		return fmt.Errorf("write vector cache: %w", err)
	}
	return nil
}
