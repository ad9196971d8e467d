package rlhttp

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	rl "github.com/rl-dev/rl/bindings/go"
)

// headerCase is one row of conformance/http/headers.yaml, the table of
// decisions and their header fields that the C++, Node and Java tests read
// too (its header says what each field means).
type headerCase struct {
	Name    string `yaml:"name"`
	Limiter struct {
		Name   string `yaml:"name"`
		Limits []struct {
			Limit    int64 `yaml:"limit"`
			WindowUs int64 `yaml:"window_us"`
		} `yaml:"limits"`
	} `yaml:"limiter"`
	Decision struct {
		Allowed      bool   `yaml:"allowed"`
		Remaining    int64  `yaml:"remaining"`
		RetryAfterUs int64  `yaml:"retry_after_us"`
		ResetAfterUs int64  `yaml:"reset_after_us"`
		LimitIndex   int    `yaml:"limit_index"`
		Source       string `yaml:"source"`
	} `yaml:"decision"`
	Headers map[string]string `yaml:"headers"`
	Error   string            `yaml:"error"`
}

func sourceNamed(t *testing.T, name string) rl.Source {
	for s := rl.SourceStore; s <= rl.SourceDenyCache; s++ {
		if s.String() == name {
			return s
		}
	}
	t.Fatalf("not a source: %q", name)
	return 0
}

func usDuration(us int64) time.Duration {
	if us < 0 {
		return rl.Never
	}
	return time.Duration(us) * time.Microsecond
}

// The fields the middleware sends (rl.HeaderFields) for every decision of
// the shared table, byte for byte.
func TestHeaderFieldsOfTheSharedTable(t *testing.T) {
	text, err := os.ReadFile("../../../conformance/http/headers.yaml")
	if err != nil {
		t.Fatalf("the table of header cases: %v", err)
	}
	var table struct {
		Cases []headerCase `yaml:"cases"`
	}
	if err := yaml.Unmarshal(text, &table); err != nil {
		t.Fatalf("conformance/http/headers.yaml: %v", err)
	}
	if len(table.Cases) < 20 {
		t.Fatalf("conformance/http/headers.yaml has %d cases", len(table.Cases))
	}
	for _, c := range table.Cases {
		limits := make([]rl.Limit, len(c.Limiter.Limits))
		for i, l := range c.Limiter.Limits {
			limits[i] = rl.Limit{Limit: l.Limit, Window: usDuration(l.WindowUs)}
		}
		d := rl.Decision{
			Allowed:    c.Decision.Allowed,
			Remaining:  c.Decision.Remaining,
			RetryAfter: usDuration(c.Decision.RetryAfterUs),
			ResetAfter: usDuration(c.Decision.ResetAfterUs),
			LimitIndex: c.Decision.LimitIndex,
			Source:     sourceNamed(t, c.Decision.Source),
		}
		fields, err := rl.HeaderFields(c.Limiter.Name, limits, d)
		if c.Error != "" {
			var rlErr *rl.Error
			if !errors.As(err, &rlErr) || rlErr.Status != rl.StatusInvalidArgument || !strings.Contains(rlErr.Message, c.Error) {
				t.Errorf("%s: got %v, %v; want an invalid-argument error containing %q", c.Name, fields, err, c.Error)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		// What the middleware calls: a renderer kept across decisions
		// (its RateLimit-Policy string made once), into a buffer.
		r := rl.NewHeaderRenderer(c.Limiter.Name, limits)
		for range 2 {
			var buf [3]rl.HeaderField
			if appended, err := r.AppendFields(buf[:0], d); err != nil || !slices.Equal(appended, fields) {
				t.Errorf("%s: AppendFields = %v, %v; HeaderFields = %v", c.Name, appended, err, fields)
			}
		}
		got := map[string]string{}
		for _, f := range fields {
			got[f.Name] = f.Value
		}
		if !reflect.DeepEqual(got, c.Headers) && !(len(got) == 0 && len(c.Headers) == 0) {
			t.Errorf("%s:\n got  %q\n want %q", c.Name, got, c.Headers)
		}
	}
}
