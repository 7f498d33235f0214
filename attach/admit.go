package attach

import "fmt"

// File is one attached file. Before it is downloaded only its description
// is known (Data is nil); Size is then the size Slack declared.
type File struct {
	ID   string // Slack's file id
	Name string
	// Type is the media type the file was declared with: a hint for the
	// name-type-size line, never trusted for what the file holds.
	Type string
	Size int64
	Data []byte
}

// Skipped is a file that is not read, with the sentence the person who
// attached it is told.
type Skipped struct {
	File   File
	Reason string
}

// Admit splits a message's files into those to read and those skipped:
// a file over maxBytes (by its declared size; Fetcher checks again while
// reading), and every file past the first maxCount. Order is kept.
func Admit(files []File, maxBytes int64, maxCount int) (read []File, skipped []Skipped) {
	for _, f := range files {
		switch {
		case f.Size > maxBytes:
			skipped = append(skipped, Skipped{f, TooLargeReason(f.Name, f.Size, maxBytes)})
		case len(read) >= maxCount:
			skipped = append(skipped, Skipped{f, fmt.Sprintf("%s was not read: I read at most %d files of a message.", displayName(f.Name), maxCount)})
		default:
			read = append(read, f)
		}
	}
	return read, skipped
}

// TooLargeReason is what the person is told about a file over maxBytes;
// size is 0 when only the download found it too large.
func TooLargeReason(name string, size, maxBytes int64) string {
	if size > 0 {
		return fmt.Sprintf("%s (%s) was not read: files over %s are skipped.", displayName(name), FormatSize(size), FormatSize(maxBytes))
	}
	return fmt.Sprintf("%s was not read: it is over %s, the most I read of a file.", displayName(name), FormatSize(maxBytes))
}

// FormatSize writes n bytes the way Slack shows file sizes.
func FormatSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
}

// displayName is a file's name fit for a sentence: at most 80 characters,
// no line breaks (a name is written by whoever attached the file).
func displayName(name string) string {
	r := []rune(name)
	out := make([]rune, 0, min(len(r), 81))
	for _, c := range r {
		if c < 0x20 || c == 0x7f {
			c = ' '
		}
		out = append(out, c)
		if len(out) == 80 {
			out = append(out, '…')
			break
		}
	}
	if len(out) == 0 {
		return "a file without a name"
	}
	return string(out)
}

// DisplayName is a file's name as the reasons and turn content write it:
// at most 80 characters, no line breaks.
func DisplayName(name string) string { return displayName(name) }
