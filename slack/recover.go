package slack

import (
	"context"
	"runtime/debug"

	"go.uber.org/zap"
)

// failureNote ends the progress message of a request the bot failed on
// its own side (a panic the session did not catch).
const failureNote = "_Something went wrong on the bot's side, and there is no answer. Please ask again._"

// recovered ends a request that panicked in the headend: the stack goes
// to the log, the progress message (when r has one) gets the failure
// note in place of its Stop button, and the bot goes on serving. It must
// be deferred, first thing, by the goroutine handling the request.
func (b *Bot) recovered(ctx context.Context, r *run) {
	p := recover()
	if p == nil {
		return
	}
	fields := []zap.Field{zap.Any("panic", p), zap.ByteString("stack", debug.Stack())}
	if r != nil {
		fields = append(fields, zap.String("session", r.id))
	}
	b.log.Error("request panicked", fields...)
	if r == nil || r.display == nil {
		return
	}
	r.display.stop()
	r.display.conclude(ctx, noteMessage(failureNote))
}

// survive, deferred first thing by a goroutine the headend starts beside
// its requests (the reaper, the channel directory, the fleet count,
// progress refreshes, decorations, lease renewals, Stop polling, clicks),
// logs a panic there instead of letting it end the process and every
// session in it. The goroutine's work stops; the session it served, if
// any, goes on and concludes as usual.
func (b *Bot) survive(what string) {
	if p := recover(); p != nil {
		b.log.Error("panic in "+what, zap.Any("panic", p), zap.ByteString("stack", debug.Stack()))
	}
}
