package main

// Sentinel: REDIS_TYPE=SENTINEL with envoyproxy/ratelimit's REDIS_URL
// ("master,host:port"); after SENTINEL FAILOVER the server decides on the
// new master without a restart.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
)

func redisCLI(port int, args ...string) string {
	out, _ := exec.Command("redis-cli", append([]string{"-p", strconv.Itoa(port)}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out))
}

// startProcess runs a redis-server (or sentinel) with its config file.
func startProcess(t *testing.T, port int, conf string) {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(file, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\nsave \"\"\ndir %s\n%s", port, dir, conf)), 0o644); err != nil {
		t.Fatal(err)
	}
	var log syncBuffer
	cmd := exec.Command("redis-server", file)
	if strings.Contains(conf, "sentinel monitor") {
		cmd.Args = append(cmd.Args, "--sentinel")
	}
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := waitIn(cmd)
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-done })
	waitListening(t, port, done, "redis-server", &log)
}

func TestSentinelFailover(t *testing.T) {
	master, replica, sentinel := freePort(t), freePort(t), freePort(t)
	startProcess(t, master, "")
	startProcess(t, replica, fmt.Sprintf("replicaof 127.0.0.1 %d\n", master))
	startProcess(t, sentinel, fmt.Sprintf("sentinel monitor m 127.0.0.1 %d 1\nsentinel down-after-milliseconds m 1000\nsentinel failover-timeout m 10000\n", master))
	waitFor(t, "the replica in sync", func() bool {
		return strings.Contains(redisCLI(replica, "info", "replication"), "master_link_status:up")
	})
	waitFor(t, "the sentinel to see the replica", func() bool {
		return strings.Contains(redisCLI(sentinel, "sentinel", "replicas", "m"), strconv.Itoa(replica))
	})
	s := startRL(t, "", map[string]string{"d.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 1000}\n"},
		"REDIS_TYPE=SENTINEL", fmt.Sprintf("REDIS_URL=m,127.0.0.1:%d", sentinel), "REDIS_TIMEOUT=500ms")
	call := func() error {
		resp, err := s.Call(request("d", 0, entry("k", "v")))
		if err == nil && resp.OverallCode != pb.RateLimitResponse_OK {
			return fmt.Errorf("answer %v", resp)
		}
		return err
	}
	if err := call(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "SENTINEL FAILOVER accepted", func() bool { return redisCLI(sentinel, "sentinel", "failover", "m") == "OK" })
	waitFor(t, "the sentinel to name the replica", func() bool {
		_ = call() // decisions go on meanwhile; some may fail while the master moves
		return strings.Contains(redisCLI(sentinel, "sentinel", "get-master-addr-by-name", "m"), strconv.Itoa(replica))
	})
	waitFor(t, "decisions on the new master", func() bool {
		return call() == nil && strings.Contains(redisCLI(replica, "role"), "master") && redisCLI(replica, "dbsize") != "0"
	})
	// the new master counts: the count went on from what replication carried
	before := time.Now()
	for i := 0; i < 5; i++ {
		if err := call(); err != nil {
			t.Fatalf("after the failover: %v", err)
		}
	}
	t.Logf("5 decisions on the new master in %v", time.Since(before))
}
