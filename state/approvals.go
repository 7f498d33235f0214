package state

import (
	"database/sql"
	"encoding/json"
	"time"
)

// Approval is one decision on a tool call that waited for a person's
// approval.
type Approval struct {
	Tool     string    `json:"tool"`     // the tool's full name
	Decision string    `json:"decision"` // approved, denied, timed out, cancelled
	By       string    `json:"by,omitempty"`
	Thread   bool      `json:"thread,omitempty"` // approved for the rest of the thread
	At       time.Time `json:"at"`
}

// encodeApprovals is list as stored in one text field: JSON, "" for none.
func encodeApprovals(list []Approval) string {
	if len(list) == 0 {
		return ""
	}
	data, _ := json.Marshal(list) // strings and times always encode
	return string(data)
}

// decodeApprovals reads what encodeApprovals wrote; anything else is none.
func decodeApprovals(s string) []Approval {
	var list []Approval
	if s == "" || json.Unmarshal([]byte(s), &list) != nil {
		return nil
	}
	return list
}

// addColumn gives a table made by an older release a column it lacks,
// declared as decl.
func addColumn(db interface {
	QueryRow(query string, args ...any) *sql.Row
	Exec(query string, args ...any) (sql.Result, error)
}, table, column, decl string) error {
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?`, table, column).Scan(&n); err != nil {
		return err
	}
	if n > 0 {
		return nil
	}
	_, err := db.Exec(`ALTER TABLE ` + table + ` ADD COLUMN ` + column + ` ` + decl)
	return err
}
