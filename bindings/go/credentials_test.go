package rl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
)

// authURL is an AUTH server of scripts/with-redis (env names it) and its
// password; tests that need it skip without it.
func authURL(t *testing.T, env string) (string, string) {
	t.Helper()
	raw := os.Getenv(env)
	if raw == "" {
		t.Skipf("%s is not set (run under scripts/with-redis)", env)
	}
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatalf("%s: %v", env, err)
	}
	password, _ := u.User.Password()
	return raw, password
}

// shown is every common way of printing v, as one string to search.
func shown(v any) string {
	encoded, _ := json.Marshal(v)
	return fmt.Sprintf("%v %+v %#v %s", v, v, v, encoded)
}

// A store opened with a password: neither it, its limiter nor their
// printed forms carry the password.
func TestStoreAndLimiterNeverShowThePassword(t *testing.T) {
	for _, env := range []string{"RL_TEST_REDIS_PASSWORD_URL", "RL_TEST_REDIS_ACL_URL"} {
		t.Run(env, func(t *testing.T) {
			raw, password := authURL(t, env)
			s, err := Open(context.Background(), raw)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			lim := newLimiter(t, s, Config{Limit: "5/s", Name: "credentials"})
			if d, err := lim.Acquire(context.Background(), "k", 1); err != nil || !d.Allowed {
				t.Fatalf("Acquire: %+v, %v", d, err)
			}
			for _, v := range []any{s, lim} { // %v of a pointer to a struct prints its fields
				if text := shown(v); strings.Contains(text, password) {
					t.Fatalf("the password shows in %s", text)
				}
			}
		})
	}
}

// An open refused for its credentials says so (ErrAuth) without quoting them.
func TestRefusedCredentialsAreNotQuoted(t *testing.T) {
	raw, password := authURL(t, "RL_TEST_REDIS_ACL_URL")
	const wrong = "wr0ng-pa55word"
	_, err := Open(context.Background(), strings.Replace(raw, ":"+password+"@", ":"+wrong+"@", 1))
	var rlErr *Error
	if !errors.Is(err, ErrAuth) || !errors.As(err, &rlErr) {
		t.Fatalf("Open with a wrong password: got %v, want ErrAuth", err)
	}
	if text := shown(err) + shown(rlErr); strings.Contains(text, wrong) {
		t.Fatalf("the password shows in %s", text)
	}
}

// rl's messages about a malformed URL name the url, but never quote the
// password in it (core/config/url.cpp; these fail until librl redacts them).
func TestMalformedURLsDoNotQuoteTheirPassword(t *testing.T) {
	const password = "s3cret-pw"
	for _, raw := range []string{
		"redis://user:" + password + "@:6379",
		"redis://user:" + password + "%zz@host",
		"redis://user:" + password + "@host?timeout_ms=%zz",
		"redis://" + password + "@:6379",
	} {
		_, err := Open(context.Background(), raw)
		wantStatus(t, "Open(malformed url)", err, ErrInvalidArgument, "url")
		if text := shown(err); strings.Contains(text, password) {
			t.Fatalf("the password shows in %s", text)
		}
	}
}
