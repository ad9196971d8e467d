package rl

import (
	"reflect"
	"sort"
	"testing"
)

func settingNamed(t *testing.T, name string) SettingInfo {
	t.Helper()
	for _, s := range SettingInfos() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("rl has no setting %q", name)
	return SettingInfo{}
}

func sorted(words []string) []string {
	out := append([]string(nil), words...)
	sort.Strings(out)
	return out
}

// The binding's typed copies of rl's settings table say what the table
// says: a setting renamed or a choice added in the core fails here.
func TestTypedSettingsMatchRlsTable(t *testing.T) {
	all := SettingInfos()
	if len(all) < 30 {
		t.Fatalf("only %d settings", len(all))
	}
	algorithms := []string{string(GCRA), string(TokenBucket), string(SlidingLog), string(SlidingWindow), string(FixedWindow), string(Suppressed)}
	if got := settingNamed(t, "algorithm").Choices; !reflect.DeepEqual(sorted(got), sorted(algorithms)) {
		t.Errorf("Algorithm constants %v, rl's algorithms %v", algorithms, got)
	}
	policies := []string{string(FailClosed), string(FailOpen), string(FailLocal)}
	if got := settingNamed(t, "on_failure").Choices; !reflect.DeepEqual(sorted(got), sorted(policies)) {
		t.Errorf("OnFailure constants %v, rl's on_failure %v", policies, got)
	}
	// Config's typed fields, by the setting each becomes (newConfig).
	for _, name := range []string{"algorithm", "limit", "burst", "name", "on_failure", "local_share"} {
		if s := settingNamed(t, name); s.Scope != "limiter" {
			t.Errorf("Config sets %s, a %s setting", name, s.Scope)
		}
	}
	if s := settingNamed(t, "timeout_ms"); s.Kind != "count" || s.RangeMin != 1 || s.Scope != "store" {
		t.Errorf("timeout_ms: %+v", s)
	}
	if !settingNamed(t, "sentinel_password").Secret {
		t.Error("sentinel_password is not a secret")
	}
}
