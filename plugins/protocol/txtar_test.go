package protocol

import (
	"bytes"
	"strings"
)

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	Name string
	Data []byte
}

// parseTxtar splits a txtar archive (golang.org/x/tools/txtar format: a
// comment, then files introduced by "-- name --" lines) without the module.
func parseTxtar(data []byte) (comment []byte, files []txtarFile) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	cur := -1
	for _, l := range lines {
		if name, ok := txtarMarker(l); ok {
			files = append(files, txtarFile{Name: name})
			cur = len(files) - 1
			continue
		}
		if cur < 0 {
			comment = append(comment, l...)
		} else {
			files[cur].Data = append(files[cur].Data, l...)
		}
	}
	return comment, files
}

// txtarMarker recognises a "-- name --" line.
func txtarMarker(l []byte) (string, bool) {
	s := strings.TrimRight(string(l), "\r\n")
	if !strings.HasPrefix(s, "-- ") || !strings.HasSuffix(s, " --") || len(s) < 7 {
		return "", false
	}
	return strings.TrimSpace(s[3 : len(s)-3]), true
}

// formatTxtar is the inverse of parseTxtar; every file ends with a newline.
func formatTxtar(comment []byte, files []txtarFile) []byte {
	var b bytes.Buffer
	b.Write(comment)
	for _, f := range files {
		b.WriteString("-- " + f.Name + " --\n")
		b.Write(f.Data)
		if len(f.Data) > 0 && f.Data[len(f.Data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}
