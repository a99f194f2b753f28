package jsonpatch

// The GOPATH-era package: no go.mod here.
