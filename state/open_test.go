package state

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/slackbot/slackbot/config"
)

func TestOpenChoosesTheConfiguredBackend(t *testing.T) {
	// Not parallel: the default-path case changes the working directory.
	dir := t.TempDir()
	t.Chdir(dir)
	type openCase struct {
		name    string
		cfg     config.State
		want    string // the Store's type, or "" for an error
		wantErr error
		file    string // a file Open must have created
	}
	tests := []openCase{
		{"memory is in memory", config.State{Backend: "memory"}, "*state.Memory", nil, ""},
		{"sqlite opens the configured file", config.State{Backend: "sqlite", Path: filepath.Join(dir, "a", "s.db")}, "*state.SQLite", nil, filepath.Join(dir, "a", "s.db")},
		{"no backend means sqlite at the default path", config.State{}, "*state.SQLite", nil, filepath.Join(dir, defaultPath)},
		{"an unknown backend is an error", config.State{Backend: "etcd"}, "", nil, ""},
	}
	tests = append(tests, openCase{"redis without a URL says so", config.State{Backend: "redis"}, "", nil, ""})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(tc.cfg)
			if tc.want == "" {
				if err == nil {
					s.Close()
					t.Fatal("no error")
				}
				if tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := fmt.Sprintf("%T", s); got != tc.want {
				t.Fatalf("Open gave a %s, want %s", got, tc.want)
			}
			if tc.file != "" {
				if _, err := os.Stat(tc.file); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}
