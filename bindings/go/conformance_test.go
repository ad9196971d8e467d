package rl

// The conformance runner of the Go binding: every case of conformance/*.yaml
// (format in conformance/README.md) on memory:// and, when RL_TEST_REDIS_URL
// is set, on that Redis. It prints one line per case and "N passed, N failed".

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

// The case format (conformance/schema/schema.yaml): every case is checked
// against it, and given its defaults, before it is decoded and run.
type caseSchema struct {
	Scalars  map[string]string       `yaml:"scalars"`
	Records  map[string]schemaRecord `yaml:"records"`
	patterns map[string]*regexp.Regexp
}

type schemaRecord struct {
	Fields       map[string]schemaField `yaml:"fields"`
	AnyField     string                 `yaml:"any_field"`
	ExactlyOneOf []string               `yaml:"exactly_one_of"`
	AtMostOneOf  []string               `yaml:"at_most_one_of"`
}

type schemaField struct {
	Type       string  `yaml:"type"`
	Required   bool    `yaml:"required"`
	Default    *string `yaml:"default"`
	With       string  `yaml:"with"`
	List       bool    `yaml:"list"`
	Verb       bool    `yaml:"verb"`
	Decides    bool    `yaml:"decides"`
	OfDecision bool    `yaml:"of_decision"`
}

func loadSchema(path string) (*caseSchema, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s := &caseSchema{patterns: map[string]*regexp.Regexp{}}
	if err := yaml.Unmarshal(data, s); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	for name, pattern := range s.Scalars {
		s.patterns[name] = regexp.MustCompile("^(?:" + pattern + ")$")
	}
	return s, nil
}

// check checks n against the schema's type typ and fills in the defaults it
// gives; the error names the field at fault, where being the path to n.
func (s *caseSchema) check(n *yaml.Node, typ, where string) error {
	if pattern, ok := s.patterns[typ]; ok {
		if n.Kind != yaml.ScalarNode || !pattern.MatchString(n.Value) {
			article := "a"
			if typ == "int64" {
				article = "an"
			}
			return fmt.Errorf("%s: '%s' is not %s %s", where, n.Value, article, typ)
		}
		return nil
	}
	r := s.Records[typ]
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s must be a map", where)
	}
	given := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		field, value := n.Content[i].Value, n.Content[i+1]
		given[field] = true
		spec, known := r.Fields[field]
		if !known && r.AnyField == "" {
			return fmt.Errorf("%s: unknown field '%s'", where, field)
		} else if !known {
			spec = schemaField{Type: r.AnyField}
		}
		at := where + "." + field
		if !spec.List {
			if err := s.check(value, spec.Type, at); err != nil {
				return err
			}
			continue
		}
		if value.Kind != yaml.SequenceNode {
			return fmt.Errorf("%s must be a list", at)
		}
		for j, item := range value.Content {
			if err := s.check(item, spec.Type, fmt.Sprintf("%s[%d]", at, j+1)); err != nil {
				return err
			}
		}
	}
	var verbs, checks []string
	hasVerbs := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		field := n.Content[i].Value
		spec := r.Fields[field]
		if spec.With != "" && !given[spec.With] {
			return fmt.Errorf("%s.%s without %s", where, field, spec.With)
		}
		if spec.Verb {
			verbs = append(verbs, field)
		}
		if spec.OfDecision {
			checks = append(checks, field)
		}
	}
	for field, spec := range r.Fields {
		hasVerbs = hasVerbs || spec.Verb
		if spec.Required && !given[field] {
			return fmt.Errorf("%s: no %s", where, field)
		}
	}
	for rule, group := range map[string][]string{"exactly one of": r.ExactlyOneOf, "at most one of": r.AtMostOneOf} {
		count := 0
		for _, field := range group {
			if given[field] {
				count++
			}
		}
		if len(group) > 0 && (count > 1 || (count == 0 && rule == "exactly one of")) {
			return fmt.Errorf("%s: %s %s", where, rule, strings.Join(group, ", "))
		}
	}
	if hasVerbs && len(verbs) != 1 {
		return fmt.Errorf("%s: needs exactly one verb", where)
	}
	if hasVerbs && len(checks) > 0 && !r.Fields[verbs[0]].Decides {
		return fmt.Errorf("%s: %s returns no decision for %s", where, verbs[0], checks[0])
	}
	for field, spec := range r.Fields {
		if spec.Default != nil && !given[field] {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: field},
				&yaml.Node{Kind: yaml.ScalarNode, Value: *spec.Default})
		}
	}
	return nil
}

// A case as its file gives it, before it is checked.
type caseEntry struct {
	name string
	node *yaml.Node
}

// The schema and its negative fixture, whose every case it must refuse.
const (
	schemaFile     = "../../conformance/schema/schema.yaml"
	refusedFixture = "../../conformance/schema/unknown_fields.yaml"
)

func TestConformance(t *testing.T) {
	files, err := filepath.Glob("../../conformance/*.yaml")
	if err != nil || len(files) == 0 {
		t.Skipf("no conformance/*.yaml yet (%v)", err)
	}
	schema, err := loadSchema(schemaFile)
	if err != nil {
		t.Fatal(err)
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
		t.Run(kind, func(t *testing.T) { runConformance(t, schema, kind, url, files) })
	}
}

func runConformance(t *testing.T, schema *caseSchema, kind, url string, files []string) {
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
			report(file, c.name, runCase(schema, c.node, caseURL))
		}
	}
	fmt.Printf("%d passed, %d failed\n", passed, failed)
}

func readCases(path string) ([]caseEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var f struct {
		Cases []yaml.Node `yaml:"cases"`
	}
	if err := yaml.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("malformed: %v", err)
	}
	entries := make([]caseEntry, len(f.Cases))
	for i := range f.Cases {
		var named struct {
			Name string `yaml:"name"`
		}
		_ = f.Cases[i].Decode(&named) // a case with no name is refused by the schema
		entries[i] = caseEntry{named.Name, &f.Cases[i]}
	}
	return entries, nil
}

// runCase returns "" when the case passed, else what differed; a case the
// schema refuses never runs.
func runCase(schema *caseSchema, node *yaml.Node, url string) (problem string) {
	if err := schema.check(node, "case", "case"); err != nil {
		return "bad case: " + err.Error()
	}
	defer func() { // a value the schema let through but Go cannot take
		if r := recover(); r != nil {
			bad, ok := r.(badCase)
			if !ok {
				panic(r)
			}
			problem = "bad case: " + string(bad)
		}
	}()
	c := fieldsOf(node)
	ctx := context.Background()
	store, err := Open(ctx, url)
	if err != nil {
		return fmt.Sprintf("open %s: %v", url, err)
	}
	defer store.Close()
	if err := store.SetClock(toInt(c["clock"], "clock")); err != nil {
		return fmt.Sprintf("clock %s: %v", c["clock"].Value, err)
	}
	var settings []Setting
	for i := 0; i+1 < len(c["limiter"].Content); i += 2 {
		settings = append(settings, Setting{c["limiter"].Content[i].Value, c["limiter"].Content[i+1].Value})
	}
	processes := toInt(c["processes"], "processes")
	if processes < 1 || processes > 64 {
		panic(badCase(fmt.Sprintf("processes: %d is not 1 to 64", processes)))
	}
	// One limiter per process of the case, each its own (its own leases).
	var lims []*Limiter
	for p := int64(0); p < processes; p++ {
		lim, err := store.Limiter(Config{Settings: settings})
		if c["error"] != nil || err != nil {
			if problem := checkError("limiter", err, text(c["error"]), text(c["message_contains"])); problem != "" || err != nil {
				return problem
			}
		}
		defer lim.Close()
		lims = append(lims, lim)
	}
	for i, s := range c["steps"].Content {
		step := fieldsOf(s)
		process := toInt(step["process"], "process")
		if process < 0 || process >= processes {
			panic(badCase(fmt.Sprintf("step %d.process: %d is not below processes (%d)", i+1, process, processes)))
		}
		if problem := runStep(ctx, schema, store, lims[process], step); problem != "" {
			return fmt.Sprintf("step %d: %s", i+1, problem)
		}
	}
	return ""
}

// badCase: a value that passed the schema's check but is still not usable
// (an int64 out of range).
type badCase string

// fieldsOf: a checked map's values by field.
func fieldsOf(n *yaml.Node) map[string]*yaml.Node {
	m := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		m[n.Content[i].Value] = n.Content[i+1]
	}
	return m
}

// text: a scalar's text, "" when it is not there.
func text(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	return n.Value
}

func toInt(n *yaml.Node, what string) int64 {
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		panic(badCase(fmt.Sprintf("%s: '%s' is not an int64", what, n.Value)))
	}
	return v
}

func runStep(ctx context.Context, schema *caseSchema, store *Store, lim *Limiter, s map[string]*yaml.Node) string {
	verb := schema.verbOf(s)
	wantStatus, wantMessage := text(s["error"]), text(s["message_contains"])
	if verb == "advance" {
		err := store.AdvanceClock(time.Duration(toInt(s["advance"], "advance")) * time.Microsecond)
		return checkError("advance", err, wantStatus, wantMessage)
	}
	if verb == "stats" {
		return compareStats(store, fieldsOf(s["stats"]))
	}
	request := fieldsOf(s[verb])
	key, err := keyOf(request)
	if err != nil {
		return err.Error()
	}
	cost := int64(0) // reset takes none; the others' default is the schema's
	if request["cost"] != nil {
		cost = toInt(request["cost"], "cost")
	}
	repeat := toInt(s["repeat"], "repeat")
	allowed := int64(0) // over the repeats, for allowed_count
	for r := int64(1); r <= repeat; r++ {
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
		if problem := checkError(at, err, wantStatus, wantMessage); problem != "" || err != nil {
			return problem
		}
		if verb == "reset" {
			continue
		}
		if d.Allowed {
			allowed++
		}
		if problem := schema.compare(s["each"], d, at); problem != "" {
			return problem
		}
		if r == repeat {
			if problem := schema.compare(s["expect"], d, at); problem != "" {
				return problem
			}
		}
	}
	if s["allowed_count"] != nil && toInt(s["allowed_count"], "allowed_count") != allowed {
		return fmt.Sprintf("%s: allowed_count = %d, want %s", verb, allowed, s["allowed_count"].Value)
	}
	return ""
}

// compareStats: "" when the counters listed in want match the store's
// lease counters (Stats().Leases), by the format's names.
func compareStats(store *Store, want map[string]*yaml.Node) string {
	st, err := store.Stats()
	if err != nil {
		return "stats: " + err.Error()
	}
	got := map[string]uint64{
		"leases_taken":         st.Leases.Taken,
		"lease_units_leased":   st.Leases.UnitsLeased,
		"lease_units_unused":   st.Leases.UnitsUnused,
		"lease_units_returned": st.Leases.UnitsReturned,
		"lease_decisions":      st.Leases.Decisions,
	}
	var diffs []string
	for _, field := range []string{"leases_taken", "lease_units_leased", "lease_units_unused", "lease_units_returned", "lease_decisions"} {
		if n := want[field]; n != nil && uint64(toInt(n, field)) != got[field] {
			diffs = append(diffs, fmt.Sprintf("%s: expected %s, got %d", field, n.Value, got[field]))
		}
	}
	if len(diffs) > 0 {
		return "stats: " + strings.Join(diffs, ", ")
	}
	return ""
}

// verbOf: the verb of a checked step, its one field with verb: true.
func (s *caseSchema) verbOf(step map[string]*yaml.Node) string {
	for field := range step {
		if s.Records["step"].Fields[field].Verb {
			return field
		}
	}
	panic(badCase("a step with no verb"))
}

func keyOf(request map[string]*yaml.Node) (string, error) {
	switch {
	case request["key_hex"] != nil:
		b, err := hex.DecodeString(request["key_hex"].Value)
		if err != nil {
			return "", fmt.Errorf("key_hex: %v", err)
		}
		return string(b), nil
	case request["key_len"] != nil:
		return strings.Repeat("x", int(toInt(request["key_len"], "key_len"))), nil
	}
	return text(request["key"]), nil
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

// compare checks d against the decision fields expect lists (nil: none),
// each read as the schema's type for it.
func (s *caseSchema) compare(expect *yaml.Node, d Decision, at string) string {
	if expect == nil {
		return ""
	}
	us := func(v time.Duration) int64 {
		if v == Never {
			return -1
		}
		return int64(v / time.Microsecond)
	}
	got := map[string]any{
		"allowed": d.Allowed, "limit": d.Limit, "remaining": d.Remaining,
		"retry_after_us": us(d.RetryAfter), "reset_after_us": us(d.ResetAfter),
		"limit_index": int64(d.LimitIndex), "suppression_factor": d.SuppressionFactor,
	}
	var diffs []string
	for field, n := range fieldsOf(expect) {
		var want any
		switch s.Records["decision"].Fields[field].Type {
		case "bool":
			want = n.Value == "true"
		case "number": // suppression_factor: multiples of 2^-24, exact in a double
			want, _ = strconv.ParseFloat(n.Value, 64)
		default:
			want = toInt(n, field)
		}
		if want != got[field] {
			diffs = append(diffs, fmt.Sprintf("%s = %v, want %v", field, got[field], want))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	sort.Strings(diffs)
	return at + ": " + strings.Join(diffs, ", ")
}

// TestConformanceRefusesUnknownFields: every case of the negative fixture is
// refused before it runs, naming the field the schema does not know.
func TestConformanceRefusesUnknownFields(t *testing.T) {
	schema, err := loadSchema(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	cases, err := readCases(refusedFixture)
	if err != nil || len(cases) == 0 {
		t.Fatalf("%s: %v (%d cases)", refusedFixture, err, len(cases))
	}
	for _, c := range cases {
		problem := runCase(schema, c.node, "memory://?clock=manual")
		if !strings.HasPrefix(problem, "bad case: ") || !strings.Contains(problem, "unknown field 'bogus_") {
			t.Errorf("%s: %s: %q, want it refused for its bogus_ field", filepath.Base(refusedFixture), c.name, problem)
		}
	}
}
