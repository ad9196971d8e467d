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

	"gopkg.in/yaml.v3"
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

// urlShape is one row of tests/data/url_shapes.yaml, the table of URL shapes
// every binding's tests share (its header says what each field means).
type urlShape struct {
	Name    string   `yaml:"name"`
	URL     string   `yaml:"url"`
	Display string   `yaml:"display"`
	Secrets []string `yaml:"secrets"`
	Refused string   `yaml:"refused"`
	Opens   *bool    `yaml:"opens"`
}

func urlShapes(t *testing.T) []urlShape {
	t.Helper()
	text, err := os.ReadFile("../../tests/data/url_shapes.yaml")
	if err != nil {
		t.Fatalf("the table of URL shapes: %v", err)
	}
	var table struct {
		Shapes []urlShape `yaml:"shapes"`
	}
	if err := yaml.Unmarshal(text, &table); err != nil {
		t.Fatalf("tests/data/url_shapes.yaml: %v", err)
	}
	if len(table.Shapes) < 12 {
		t.Fatalf("tests/data/url_shapes.yaml has %d shapes", len(table.Shapes))
	}
	return table.Shapes
}

func noSecret(t *testing.T, shape urlShape, text, surface string) {
	t.Helper()
	for _, secret := range shape.Secrets {
		if strings.Contains(text, secret) {
			t.Errorf("%s: %s shows %q: %s", shape.Name, surface, secret, text)
		}
	}
}

// Every shape of the table, on every surface: Info().URL and String() are
// librl's display form, and no printed store, limiter, error of a call or
// of a refused open, nor the metrics, shows a secret.
func TestEveryURLShapeShowsOnlyLibrlsDisplayForm(t *testing.T) {
	ctx := context.Background()
	for _, shape := range urlShapes(t) {
		t.Run(shape.Name, func(t *testing.T) {
			if shape.Opens != nil && !*shape.Opens {
				_, err := Open(ctx, shape.URL)
				wantStatus(t, "Open(refused url)", err, ErrInvalidArgument, "")
				noSecret(t, shape, shown(err), "the refused open")
				return
			}
			s, err := Open(ctx, shape.URL)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			if got := s.Info().URL; got != shape.Display {
				t.Errorf("Info().URL = %q, want %q", got, shape.Display)
			}
			if got, want := s.String(), "rl.Store("+shape.Display+")"; got != want {
				t.Errorf("String() = %q, want %q", got, want)
			}
			lim := newLimiter(t, s, Config{Limit: "5/s", Name: "credentials"})
			// On closed ports a call fails as an outage; memory:// decides.
			d, err := lim.Acquire(ctx, "k", 1)
			noSecret(t, shape, shown(d)+shown(err), "a call")
			for _, v := range []any{s, lim, s.Info()} {
				noSecret(t, shape, shown(v), "the store or limiter")
			}
			noSecret(t, shape, s.Metrics(), "the metrics")
			s.Close()
			noSecret(t, shape, shown(s), "the closed store")
			_, err = Open(ctx, shape.Refused)
			wantStatus(t, "Open(refused url)", err, ErrInvalidArgument, "")
			noSecret(t, shape, shown(err), "the refused open")
		})
	}
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
