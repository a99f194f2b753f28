package supclient

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"net"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// TestEndTar: the tar trailer and the last partial chunk reach the
// supervisor as TarChunk frames that unpack to the entries written, and a
// failure to send them is an error (it used to be dropped, so a sync
// could report success after sending a truncated archive).
func TestEndTar(t *testing.T) {
	tests := []struct {
		name     string
		peerGone bool
		wantErr  bool
	}{
		{name: "delivered"},
		{name: "peer gone", peerGone: true, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, sup := net.Pipe()
			defer host.Close()
			c := New(nil, host, func() {})
			fw := &frameWriter{c: c}
			tw := tar.NewWriter(fw)
			body := []byte("package main\n")
			if err := tw.WriteHeader(&tar.Header{Name: "main.go", Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}); err != nil {
				t.Fatal(err)
			}
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
			if len(fw.buf) == 0 {
				t.Fatal("the entry was sent before endTar: the test no longer covers the final flush")
			}
			got := make(chan []byte, 1)
			if tt.peerGone {
				sup.Close()
			} else {
				go func() { // the supervisor's side: collect TarChunk frames until the pipe closes
					defer sup.Close()
					var stream []byte
					for {
						f, err := wire.ReadFrame(sup)
						if err != nil {
							got <- stream
							return
						}
						if f.Type == wire.TarChunk {
							stream = append(stream, f.Payload...)
						}
					}
				}()
			}
			err := endTar(tw, fw)
			if (err != nil) != tt.wantErr {
				t.Fatalf("endTar = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				if !errors.Is(err, io.ErrClosedPipe) {
					t.Errorf("endTar = %v, want it to wrap %v", err, io.ErrClosedPipe)
				}
				return
			}
			host.Close()
			tr := tar.NewReader(bytes.NewReader(<-got))
			hdr, err := tr.Next()
			if err != nil || hdr.Name != "main.go" {
				t.Fatalf("first entry = %v, %v; want main.go", hdr, err)
			}
			if data, err := io.ReadAll(tr); err != nil || !bytes.Equal(data, body) {
				t.Errorf("main.go = %q, %v; want %q", data, err, body)
			}
			if _, err := tr.Next(); err != io.EOF {
				t.Errorf("after main.go: %v, want io.EOF (the tar trailer)", err)
			}
		})
	}
}
