package rl

// The conformance runner of the Go binding: every case of conformance/*.yaml
// (format in conformance/README.md) on memory:// and, when RL_TEST_REDIS_URL
// is set, on that Redis. It prints one line per case and "N passed, N failed".

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

type conformanceFile struct {
	Cases []conformanceCase `yaml:"cases"`
}

type conformanceCase struct {
	Name            string    `yaml:"name"`
	Limiter         yaml.Node `yaml:"limiter"` // a mapping: its order matters
	Clock           int64     `yaml:"clock"`
	Error           string    `yaml:"error"`
	MessageContains string    `yaml:"message_contains"`
	Steps           []step    `yaml:"steps"`
}

type step struct {
	Acquire         *stepCall    `yaml:"acquire"`
	Peek            *stepCall    `yaml:"peek"`
	Refund          *stepCall    `yaml:"refund"`
	Reset           *stepCall    `yaml:"reset"`
	Advance         *int64       `yaml:"advance"`
	Repeat          int          `yaml:"repeat"`
	Each            *expectation `yaml:"each"`
	Expect          *expectation `yaml:"expect"`
	AllowedCount    *int         `yaml:"allowed_count"`
	Error           string       `yaml:"error"`
	MessageContains string       `yaml:"message_contains"`
}

type stepCall struct {
	Key    *string `yaml:"key"`
	KeyHex *string `yaml:"key_hex"`
	KeyLen *int    `yaml:"key_len"`
	Cost   *int64  `yaml:"cost"`
}

type expectation struct {
	Allowed      *bool  `yaml:"allowed"`
	Limit        *int64 `yaml:"limit"`
	Remaining    *int64 `yaml:"remaining"`
	RetryAfterUs *int64 `yaml:"retry_after_us"`
	ResetAfterUs *int64 `yaml:"reset_after_us"`
	LimitIndex   *int64 `yaml:"limit_index"`
	// Multiples of 2^-24: the YAML's decimal is exact when it is one.
	SuppressionFactor *float64 `yaml:"suppression_factor"`
}

func TestConformance(t *testing.T) {
	files, err := filepath.Glob("../../conformance/*.yaml")
	if err != nil || len(files) == 0 {
		t.Skipf("no conformance/*.yaml yet (%v)", err)
	}
	stores := map[string]string{"memory": "memory://?clock=manual"}
	if url := os.Getenv("RL_TEST_REDIS_URL"); url != "" {
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		// Every case adds its number: cases and runs never share keys.
		stores["redis"] = fmt.Sprintf("%s%sclock=manual&prefix=rlgo-%d-", url, sep, time.Now().UnixNano())
	}
	for _, kind := range []string{"memory", "redis"} {
		url, ok := stores[kind]
		if !ok {
			continue
		}
		t.Run(kind, func(t *testing.T) { runConformance(t, kind, url, files) })
	}
}

func runConformance(t *testing.T, kind, url string, files []string) {
	passed, failed := 0, 0
	report := func(file, name, problem string) {
		if problem == "" {
			passed++
			fmt.Printf("ok   [%s] %s: %s\n", kind, file, name)
			return
		}
		failed++
		fmt.Printf("FAIL [%s] %s: %s: %s\n", kind, file, name, problem)
		t.Errorf("%s: %s: %s", file, name, problem)
	}
	for f, path := range files {
		file := filepath.Base(path)
		cases, err := readCases(path)
		if err != nil {
			report(file, "(the file)", err.Error())
			continue
		}
		for i, c := range cases {
			caseURL := url
			if kind == "redis" {
				caseURL = fmt.Sprintf("%s%d-%d", url, f, i)
			}
			report(file, c.Name, runCase(c, caseURL))
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
}

func readCases(path string) ([]conformanceCase, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true) // a typo in a case must not pass as an empty check
	var f conformanceFile
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("malformed: %v", err)
	}
	return f.Cases, nil
}

// runCase returns "" when c passed, else what differed.
func runCase(c conformanceCase, url string) string {
	ctx := context.Background()
	store, err := Open(ctx, url)
	if err != nil {
		return fmt.Sprintf("open %s: %v", url, err)
	}
	defer store.Close()
	if err := store.SetClock(c.Clock); err != nil {
		return fmt.Sprintf("clock %d: %v", c.Clock, err)
	}
	settings, err := settingsOf(&c.Limiter)
	if err != nil {
		return err.Error()
	}
	lim, err := store.Limiter(Config{Settings: settings})
	if c.Error != "" || err != nil {
		if problem := checkError("limiter", err, c.Error, c.MessageContains); problem != "" || err != nil {
			return problem
		}
	}
	defer lim.Close()
	for i, s := range c.Steps {
		if problem := runStep(ctx, store, lim, s); problem != "" {
			return fmt.Sprintf("step %d: %s", i+1, problem)
		}
	}
	return ""
}

func settingsOf(node *yaml.Node) ([]Setting, error) {
	if node.Kind != yaml.MappingNode {
		return nil, errors.New("limiter: is not a mapping")
	}
	var out []Setting
	for i := 0; i+1 < len(node.Content); i += 2 {
		out = append(out, Setting{node.Content[i].Value, node.Content[i+1].Value})
	}
	return out, nil
}

func runStep(ctx context.Context, store *Store, lim *Limiter, s step) string {
	if s.Advance != nil {
		err := store.AdvanceClock(time.Duration(*s.Advance) * time.Microsecond)
		return checkError("advance", err, s.Error, s.MessageContains)
	}
	verb, call, cost := "", (*stepCall)(nil), int64(1)
	switch {
	case s.Acquire != nil:
		verb, call = "acquire", s.Acquire
	case s.Peek != nil:
		verb, call = "peek", s.Peek
	case s.Refund != nil:
		verb, call = "refund", s.Refund
	case s.Reset != nil:
		verb, call, cost = "reset", s.Reset, 0
	default:
		return "no verb (acquire, peek, refund, reset or advance)"
	}
	key, err := call.key()
	if err != nil {
		return err.Error()
	}
	if call.Cost != nil {
		cost = *call.Cost
	}
	repeat := max(s.Repeat, 1)
	allowed := 0 // over the repeats, for allowed_count
	for r := 1; r <= repeat; r++ {
		var d Decision
		switch verb {
		case "acquire":
			d, err = lim.Acquire(ctx, key, cost)
		case "peek":
			d, err = lim.Peek(ctx, key, cost)
		case "refund":
			d, err = lim.Refund(ctx, key, cost)
		case "reset":
			err = lim.Reset(ctx, key)
		}
		at := fmt.Sprintf("%s (%d of %d)", verb, r, repeat)
		if problem := checkError(at, err, s.Error, s.MessageContains); problem != "" || err != nil {
			return problem
		}
		if verb == "reset" {
			continue
		}
		if d.Allowed {
			allowed++
		}
		if problem := s.Each.check(at, d); problem != "" {
			return problem
		}
		if r == repeat {
			if problem := s.Expect.check(at, d); problem != "" {
				return problem
			}
		}
	}
	if s.AllowedCount != nil && *s.AllowedCount != allowed {
		return fmt.Sprintf("%s: allowed_count = %d, want %d", verb, allowed, *s.AllowedCount)
	}
	return ""
}

func (c *stepCall) key() (string, error) {
	switch {
	case c.KeyHex != nil:
		b, err := hex.DecodeString(*c.KeyHex)
		if err != nil {
			return "", fmt.Errorf("key_hex: %v", err)
		}
		return string(b), nil
	case c.KeyLen != nil:
		return strings.Repeat("x", *c.KeyLen), nil
	case c.Key != nil:
		return *c.Key, nil
	}
	return "", nil
}

// checkError compares a call's error with the status name a case expects
// ("" when it expects success).
func checkError(at string, err error, wantStatus, wantMessage string) string {
	if wantStatus == "" {
		if err != nil {
			return fmt.Sprintf("%s: unexpected error %v", at, err)
		}
		return ""
	}
	var rlErr *Error
	if !errors.As(err, &rlErr) {
		return fmt.Sprintf("%s: got %v, want error %s", at, err, wantStatus)
	}
	if rlErr.Status.String() != wantStatus {
		return fmt.Sprintf("%s: got %v, want %s", at, err, wantStatus)
	}
	if !strings.Contains(rlErr.Message, wantMessage) {
		return fmt.Sprintf("%s: message %q does not contain %q", at, rlErr.Message, wantMessage)
	}
	return ""
}

func (e *expectation) check(at string, d Decision) string {
	if e == nil {
		return ""
	}
	us := func(v time.Duration) int64 {
		if v == Never {
			return -1
		}
		return int64(v / time.Microsecond)
	}
	var diffs []string
	want := func(field string, got int64, w *int64) {
		if w != nil && got != *w {
			diffs = append(diffs, fmt.Sprintf("%s = %d, want %d", field, got, *w))
		}
	}
	if e.Allowed != nil && d.Allowed != *e.Allowed {
		diffs = append(diffs, fmt.Sprintf("allowed = %v, want %v", d.Allowed, *e.Allowed))
	}
	want("limit", d.Limit, e.Limit)
	want("remaining", d.Remaining, e.Remaining)
	want("retry_after_us", us(d.RetryAfter), e.RetryAfterUs)
	want("reset_after_us", us(d.ResetAfter), e.ResetAfterUs)
	want("limit_index", int64(d.LimitIndex), e.LimitIndex)
	if e.SuppressionFactor != nil && d.SuppressionFactor != *e.SuppressionFactor {
		diffs = append(diffs, fmt.Sprintf("suppression_factor = %v, want %v", d.SuppressionFactor, *e.SuppressionFactor))
	}
	if len(diffs) == 0 {
		return ""
	}
	return at + ": " + strings.Join(diffs, ", ")
}
