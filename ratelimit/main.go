// rl-ratelimit: Envoy's rate limit service (envoy.service.ratelimit.v3) on
// rl, a drop-in for envoyproxy/ratelimit: the same gRPC API, /json and
// /healthcheck endpoints, config files and environment settings
// (docs/edge-server.md).
//
//	rl-ratelimit                      serve, configured by the environment
//	rl-ratelimit --check-config DIR   validate the config files of DIR
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"
)

var bg = context.Background()

func parseDurationMS(v string) (int64, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, errors.New("must be a duration such as 500ms or 10s")
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return max(1, d.Milliseconds()), nil
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	switch level {
	case "debug", "trace":
		l = slog.LevelDebug
	case "info":
		l = slog.LevelInfo
	case "error", "fatal", "panic":
		l = slog.LevelError
	default:
		l = slog.LevelWarn
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

func checkConfig(dir string, merge bool) int {
	cfg, err := LoadConfigDir(dir, false, merge)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rl-ratelimit: config error:", err)
		return 1
	}
	fmt.Printf("rl-ratelimit: %s: %d domains, %d rules: ok\n", dir, len(cfg.domains), len(cfg.rules))
	return 0
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: rl-ratelimit [--check-config DIR]   (settings: the environment of envoyproxy/ratelimit; docs/edge-server.md)")
}

func main() {
	args := os.Args[1:]
	switch {
	case len(args) == 0:
	case len(args) == 2 && (args[0] == "--check-config" || args[0] == "-check-config"):
		merge, _ := strconv.ParseBool(os.Getenv("MERGE_DOMAIN_CONFIG"))
		os.Exit(checkConfig(args[1], merge))
	case len(args) == 1 && (args[0] == "--help" || args[0] == "-h"):
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	settings, err := LoadSettings(lookupEnv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rl-ratelimit:", err)
		os.Exit(2)
	}
	log := newLogger(settings.LogLevel)
	if len(settings.Ignored) > 0 {
		log.Warn("settings of envoyproxy/ratelimit with no meaning for rl, ignored: " + strings.Join(settings.Ignored, ", "))
	}
	srv, err := newServer(settings, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rl-ratelimit:", err)
		os.Exit(1)
	}
	if err := srv.run(); err != nil {
		fmt.Fprintln(os.Stderr, "rl-ratelimit:", err)
		os.Exit(1)
	}
}
