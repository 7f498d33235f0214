// Package attach turns the files people attach to a question into what a
// model reads: pictures as image parts (scaled to the providers' limits),
// text, logs, data and source code as text with the file's name, PDFs as
// their text, a text too long for the session's context as a handle into
// the session's tool_output store, and anything else as its name, type and
// size. It also decides which attached files are read at all (Admit),
// downloads them from Slack's file host without ever sending the bot token
// elsewhere (Fetcher), and never logs what a file holds: only sizes and
// kinds.
//
// The kind of a file is read from its bytes, never from its name or the
// type it was declared with: a script named photo.png is not an image.
package attach
