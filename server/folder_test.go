package server

import "testing"

func TestFolderFor(t *testing.T) {
	s := New(nil)
	s.folders = []string{"/work/proj", "/work/proj/sub"}
	tests := []struct {
		uri, want string
		wantErr   bool
	}{
		{uri: "file:///work/proj", want: "/work/proj"},
		{uri: "file:///work/proj/", want: "/work/proj"},
		{uri: "file:///work/proj/a.go", want: "/work/proj"},
		{uri: "file:///work/proj/sub/b.go", want: "/work/proj/sub"},
		{uri: "file:///work/proj/sub", want: "/work/proj/sub"},
		{uri: "file:///elsewhere/c.go", wantErr: true},
		{uri: "", want: "/work/proj"},
	}
	for _, tt := range tests {
		got, err := s.folderFor(tt.uri)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("folderFor(%q) = %q, %v; want %q (error %v)", tt.uri, got, err, tt.want, tt.wantErr)
		}
	}
}
