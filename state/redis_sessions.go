package state

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Session records in Redis: one hash per id, and three sorted sets that
// index the ids (all sessions, each user's, each channel's). Every member
// of an index has score 0 and is ordered by its bytes alone: the start
// time inverted and zero-padded, then ":" and the id. Ascending order is
// then newest first with ties by id, to the nanosecond, for any start
// (the zero time too), and "since" is a byte range. Each hash keeps its
// member in the field "index", so a replacement can find the old one.

// putSessionScript replaces the record KEYS[1] and its index member: the
// old member (read from the hash) leaves the all-sessions index KEYS[2]
// and the user and channel indexes named by the old record; the new
// member ARGV[1] joins KEYS[2], KEYS[3] (the user's, "" when none) and
// KEYS[4] (the channel's, "" when none). ARGV[2] and ARGV[3] are the
// prefixes of user and channel index keys. With a retention, ARGV[4] is
// when the record expires (Unix ms, "" for never), ARGV[5] the member
// bound past which the indexes written to hold only older records ("" for
// none) and ARGV[6] the retention in ms, after which an index nobody
// writes to is gone as its records are. ARGV[7:] are the hash's
// field-value pairs.
var putSessionScript = redis.NewScript(`
local old = redis.call('HMGET', KEYS[1], 'user', 'channel', 'index')
if old[3] then
  redis.call('ZREM', KEYS[2], old[3])
  if old[1] and old[1] ~= '' then redis.call('ZREM', ARGV[2] .. old[1], old[3]) end
  if old[2] and old[2] ~= '' then redis.call('ZREM', ARGV[3] .. old[2], old[3]) end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], unpack(ARGV, 7))
if ARGV[4] ~= '' then redis.call('PEXPIREAT', KEYS[1], ARGV[4]) end
for i = 2, 4 do
  if KEYS[i] ~= '' then
    redis.call('ZADD', KEYS[i], 0, ARGV[1])
    if ARGV[5] ~= '' then redis.call('ZREMRANGEBYLEX', KEYS[i], '(' .. ARGV[5], '+') end
    if i > 2 and ARGV[6] ~= '' then redis.call('PEXPIRE', KEYS[i], ARGV[6]) end
  end
end
return 1`)

// indexTime is the start time part of an index member: seconds and
// nanoseconds subtracted from their maxima and zero-padded, so that byte
// order is newest first. Seconds are offset by 2^62, which keeps every
// year from 1 to 9999 positive.
func indexTime(t time.Time) string {
	return fmt.Sprintf("%019d%09d", int64(1<<62)-t.Unix(), 999_999_999-t.Nanosecond())
}

// indexMember is id's member in the indexes.
func indexMember(s SessionRecord) string { return indexTime(s.Started) + ":" + s.ID }

// indexID is the id in an index member.
func indexID(member string) string {
	_, id, _ := strings.Cut(member, ":")
	return id
}

// feedbackScript sets the field ARGV[1] (a person's verdict) of the record
// KEYS[1] to ARGV[2]; it returns 0 when there is no such record.
var feedbackScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1`)

// feedbackField prefixes the hash field of each person's verdict, which
// holds {"value", "at"} as JSON; one field a person makes a later click
// replace the earlier one in a single HSET.
const feedbackField = "feedback:"

// verdict is a person's verdict as its hash field holds it.
type verdict struct {
	Value string    `json:"value"`
	At    time.Time `json:"at"`
}

// PutSession implements Store.
func (r *Redis) PutSession(ctx context.Context, s SessionRecord) error {
	if s.ID == "" {
		return fmt.Errorf("state: a session record needs an ID")
	}
	userKey, channelKey := "", ""
	if s.User != "" {
		userKey = r.userKey(s.User)
	}
	if s.Channel != "" {
		channelKey = r.channelKey(s.Channel)
	}
	userPrefix, channelPrefix := r.indexPrefixes()
	member := indexMember(s)
	args := []any{member, userPrefix, channelPrefix}
	args = append(args, r.retentionArgs(s.Started)...)
	args = append(args, sessionFields(s)...)
	args = append(args, "index", member)
	keys := []string{r.sessionKey(s.ID), r.sessionsKey(), userKey, channelKey}
	if err := putSessionScript.Run(ctx, r.client, keys, args...).Err(); err != nil {
		return fmt.Errorf("state: put session %q: %w", s.ID, err)
	}
	return nil
}

// retentionArgs are putSessionScript's ARGV[4:7] for a record started at
// started: its expiry, the index bound and the retention, "" where there
// is none.
func (r *Redis) retentionArgs(started time.Time) []any {
	cut, ok := r.retention.cutoff(time.Now())
	if !ok {
		return []any{"", "", ""}
	}
	keep := started.Sub(cut) // how long the record has left
	expires := ""
	if !started.IsZero() {
		expires = strconv.FormatInt(time.Now().Add(keep).UnixMilli(), 10)
	}
	// ";" sorts just after ":": members of records started at cut stay.
	return []any{expires, indexTime(cut) + ";", strconv.FormatInt(r.retention.d.Load()/int64(time.Millisecond), 10)}
}

// Session implements Store.
func (r *Redis) Session(ctx context.Context, id string) (SessionRecord, bool, error) {
	m, err := r.client.HGetAll(ctx, r.sessionKey(id)).Result()
	if err != nil {
		return SessionRecord{}, false, fmt.Errorf("state: session %q: %w", id, err)
	}
	if len(m) == 0 {
		return SessionRecord{}, false, nil
	}
	s, err := parseSession(m)
	if err != nil {
		return SessionRecord{}, false, fmt.Errorf("state: session %q: %w", id, err)
	}
	return s, true, nil
}

// Sessions implements Store.
func (r *Redis) Sessions(ctx context.Context, f SessionFilter) ([]SessionRecord, error) {
	index := r.sessionsKey()
	switch {
	case f.User != "":
		index = r.userKey(f.User)
	case f.Channel != "":
		index = r.channelKey(f.Channel)
	}
	limit := f.limit()
	rng := redis.ZRangeArgs{Key: index, Start: "-", Stop: "+", ByLex: true, Count: int64(max(limit, 100))}
	if !f.Since.IsZero() {
		// ";" sorts just after ":", so every member starting at Since is in.
		rng.Stop = "[" + indexTime(f.Since) + ";"
	}
	var out []SessionRecord
	for len(out) < limit {
		members, err := r.client.ZRangeArgs(ctx, rng).Result()
		if err != nil {
			return nil, fmt.Errorf("state: list sessions: %w", err)
		}
		rng.Offset += int64(len(members))
		ids := make([]string, len(members))
		for i, m := range members {
			ids[i] = indexID(m)
		}
		records, err := r.sessionsByID(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, s := range records {
			if f.Channel != "" && s.Channel != f.Channel {
				continue
			}
			if out = append(out, s); len(out) == limit {
				break
			}
		}
		if int64(len(members)) < rng.Count {
			break
		}
	}
	return out, nil
}

// sessionsByID reads the records ids in one round trip, in order; an id
// whose record is gone is left out.
func (r *Redis) sessionsByID(ctx context.Context, ids []string) ([]SessionRecord, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make([]*redis.MapStringStringCmd, len(ids))
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HGetAll(ctx, r.sessionKey(id))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("state: read sessions: %w", err)
	}
	out := make([]SessionRecord, 0, len(ids))
	for i, c := range cmds {
		m := c.Val()
		if len(m) == 0 {
			continue
		}
		s, err := parseSession(m)
		if err != nil {
			return nil, fmt.Errorf("state: session %q: %w", ids[i], err)
		}
		out = append(out, s)
	}
	return out, nil
}

// SetFeedback implements Store.
func (r *Redis) SetFeedback(ctx context.Context, id string, f Feedback) error {
	data, _ := json.Marshal(verdict{Value: f.Value, At: f.At}) // strings and a time always encode
	n, err := feedbackScript.Run(ctx, r.client, []string{r.sessionKey(id)}, feedbackField+f.User, string(data)).Int()
	if err != nil {
		return fmt.Errorf("state: feedback on session %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("%w: %q", ErrNoSession, id)
	}
	return nil
}

// sessionFields is s as the field-value pairs of its hash.
func sessionFields(s SessionRecord) []any {
	fields := []any{
		"id", s.ID,
		"user", s.User,
		"channel", s.Channel,
		"thread_ts", s.ThreadTS,
		"agent", s.Agent,
		"status", s.Status,
		"turns", s.Turns,
		"tool_calls", s.ToolCalls,
		"input_tokens", s.InputTokens,
		"output_tokens", s.OutputTokens,
		"cost_usd", strconv.FormatFloat(s.CostUSD, 'g', -1, 64),
		"started", s.Started.Format(time.RFC3339Nano),
		"duration_ns", int64(s.Duration),
		"report", s.Report,
		"approvals", encodeApprovals(s.Approvals),
	}
	for _, f := range s.Feedback {
		data, _ := json.Marshal(verdict{Value: f.Value, At: f.At})
		fields = append(fields, feedbackField+f.User, string(data))
	}
	return fields
}

// parseSession reads a record back from its hash.
func parseSession(m map[string]string) (SessionRecord, error) {
	s := SessionRecord{
		ID:        m["id"],
		User:      m["user"],
		Channel:   m["channel"],
		ThreadTS:  m["thread_ts"],
		Agent:     m["agent"],
		Status:    m["status"],
		Report:    m["report"],
		Approvals: decodeApprovals(m["approvals"]),
		// "feedback" is the single verdict an older release kept.
		Feedback: decodeFeedback(m["feedback"]),
	}
	for k, v := range m {
		user, ok := strings.CutPrefix(k, feedbackField)
		if !ok {
			continue
		}
		var vd verdict
		if err := json.Unmarshal([]byte(v), &vd); err != nil {
			return s, fmt.Errorf("field %s: %w", k, err)
		}
		s.Feedback = append(s.Feedback, Feedback{User: user, Value: vd.Value, At: vd.At})
	}
	sortFeedback(s.Feedback)
	var err error
	ints := []struct {
		field string
		dst   *int
	}{{"turns", &s.Turns}, {"tool_calls", &s.ToolCalls}, {"input_tokens", &s.InputTokens}, {"output_tokens", &s.OutputTokens}}
	for _, f := range ints {
		if *f.dst, err = strconv.Atoi(m[f.field]); err != nil {
			return s, fmt.Errorf("field %s: %w", f.field, err)
		}
	}
	if s.CostUSD, err = strconv.ParseFloat(m["cost_usd"], 64); err != nil {
		return s, fmt.Errorf("field cost_usd: %w", err)
	}
	if s.Started, err = time.Parse(time.RFC3339Nano, m["started"]); err != nil {
		return s, fmt.Errorf("field started: %w", err)
	}
	d, err := strconv.ParseInt(m["duration_ns"], 10, 64)
	if err != nil {
		return s, fmt.Errorf("field duration_ns: %w", err)
	}
	s.Duration = time.Duration(d)
	return s, nil
}
