package lang

import "strings"

// ScanHeader counts the lines of a source file's header in a language
// whose comments are // and /* */ (JavaScript, TypeScript, Rust), for
// HeaderLines: blank lines and comments belong to the header, and every
// other line goes to item, with its index and trimmed text. item returns
// the line the header item starting there ends on (an import over several
// lines), or ok false when the line starts the file's body. The count runs
// to the end of the last comment or item: blank lines after it are not
// part of it.
func ScanHeader(data []byte, item func(ls []string, i int, t string) (end int, ok bool)) int {
	ls := strings.Split(string(data), "\n")
	last := 0
	for i := 0; i < len(ls); i++ {
		t := strings.TrimSpace(ls[i])
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "//"):
		case strings.HasPrefix(t, "/*"):
			for !strings.Contains(ls[i], "*/") && i+1 < len(ls) {
				i++
			}
		default:
			end, ok := item(ls, i, t)
			if !ok {
				return last
			}
			i = end
		}
		last = i + 1
	}
	return last
}
