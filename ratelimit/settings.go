package main

// The environment settings of envoyproxy/ratelimit: those with a meaning
// for rl are read with its defaults; every other one it knows is accepted
// and named at start as ignored.

import (
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
)

// Settings is what the server runs with.
type Settings struct {
	Host, GRPCHost, DebugHost           string
	Port, GRPCPort, DebugPort           int
	GRPCTLS                             bool
	GRPCCert, GRPCKey, GRPCClientCA     string
	GRPCClientSAN                       string
	LogLevel                            string
	RuntimeRoot, RuntimeSub, RuntimeApp string
	IgnoreDotFiles, WatchRoot           bool
	MergeDomains                        bool
	NearLimitRatio                      float32
	HeadersEnabled                      bool
	LimitHeader, RemainingHeader        string
	ResetHeader                         string
	ShadowMode, QuotaMode               bool
	HealthyWithConfig                   bool
	StoreURL                            string // rl store URL, from REDIS_* or RL_STORE_URL
	UsePrometheus                       bool
	PrometheusAddr, PrometheusPath      string
	LocalCacheBytes                     int // LOCAL_CACHE_SIZE_IN_BYTES: the over-limit cache, 0 off
	Ignored                             []string
}

// ConfigDir is where the config files are read from.
func (s *Settings) ConfigDir() string {
	dir := s.RuntimeRoot
	if s.RuntimeSub != "" {
		dir += "/" + s.RuntimeSub
	}
	return dir + "/" + s.RuntimeApp
}

// ignoredSettings are envoyproxy/ratelimit's settings that rl has no use
// for (statsd, tracing, xDS config, memcache, its Redis pool tuning: rl
// pipelines on its own connection).
var ignoredSettings = []string{
	"GRPC_UDS", "GRPC_MAX_CONNECTION_AGE", "GRPC_MAX_CONNECTION_AGE_GRACE", "LOG_FORMAT",
	"CONFIG_TYPE", "FORCE_START_WITHOUT_INITIAL_CONFIG", "CONFIG_GRPC_XDS_NODE_ID",
	"CONFIG_GRPC_XDS_NODE_METADATA", "CONFIG_GRPC_XDS_SERVER_URL",
	"CONFIG_GRPC_XDS_SERVER_CONNECT_RETRY_INTERVAL", "CONFIG_GRPC_XDS_CLIENT_ADDITIONAL_HEADERS",
	"CONFIG_GRPC_XDS_SERVER_USE_TLS", "CONFIG_GRPC_XDS_CLIENT_TLS_CERT", "CONFIG_GRPC_XDS_CLIENT_TLS_KEY",
	"CONFIG_GRPC_XDS_SERVER_TLS_CACERT", "CONFIG_GRPC_XDS_SERVER_TLS_SAN",
	"XDS_CLIENT_BACKOFF_INITIAL_INTERVAL", "XDS_CLIENT_BACKOFF_MAX_INTERVAL",
	"XDS_CLIENT_BACKOFF_RANDOM_FACTOR", "XDS_CLIENT_BACKOFF_JITTER", "XDS_CLIENT_MAX_MSG_SIZE_IN_BYTES",
	"USE_DOG_STATSD", "USE_DOG_STATSD_MOGRIFIERS", "USE_STATSD", "STATSD_HOST", "STATSD_PORT",
	"EXTRA_TAGS", "STATS_FLUSH_INTERVAL", "DISABLE_STATS", "PROMETHEUS_MAPPER_YAML",
	"PROMETHEUS_RESPONSE_TIME_AS_MILLISECONDS", "EXPIRATION_JITTER_MAX_SECONDS",
	"CACHE_KEY_PREFIX", "BACKEND_TYPE",
	"STOP_CACHE_KEY_INCREMENT_WHEN_OVERLIMIT", "REDIS_POOL_SIZE", "REDIS_PIPELINE_WINDOW",
	"REDIS_PIPELINE_LIMIT", "REDIS_CLUSTER_PIPELINE_PARALLELISM", "REDIS_PERSECOND",
	"REDIS_PERSECOND_SOCKET_TYPE", "REDIS_PERSECOND_TYPE", "REDIS_PERSECOND_URL",
	"REDIS_PERSECOND_POOL_SIZE", "REDIS_PERSECOND_AUTH", "REDIS_PERSECOND_TLS",
	"REDIS_PERSECOND_SENTINEL_AUTH", "REDIS_PERSECOND_PIPELINE_WINDOW", "REDIS_PERSECOND_PIPELINE_LIMIT",
	"REDIS_PERSECOND_CLUSTER_PIPELINE_PARALLELISM", "REDIS_HEALTH_CHECK_ACTIVE_CONNECTION",
	"REDIS_PERSECOND_TIMEOUT", "REDIS_POOL_ON_EMPTY_BEHAVIOR", "REDIS_PERSECOND_POOL_ON_EMPTY_BEHAVIOR",
	"REDIS_STARTUP_INITIAL_INTERVAL", "REDIS_STARTUP_MAX_INTERVAL", "REDIS_STARTUP_MAX_ELAPSED_TIME",
	"MEMCACHE_HOST_PORT", "MEMCACHE_MAX_IDLE_CONNS", "MEMCACHE_SRV", "MEMCACHE_SRV_REFRESH",
	"MEMCACHE_TLS", "MEMCACHE_TLS_CLIENT_CERT", "MEMCACHE_TLS_CLIENT_KEY", "MEMCACHE_TLS_CACERT",
	"MEMCACHE_TLS_SKIP_HOSTNAME_VERIFICATION", "RESPONSE_DYNAMIC_METADATA", "TRACING_ENABLED",
	"TRACING_SERVICE_NAME", "TRACING_SERVICE_NAMESPACE", "TRACING_SERVICE_INSTANCE_ID",
	"TRACING_EXPORTER_PROTOCOL", "TRACING_SAMPLING_RATE",
}

type envReader struct {
	get  func(string) (string, bool)
	errs []string
}

func (e *envReader) str(name, def string) string {
	if v, ok := e.get(name); ok {
		return v
	}
	return def
}

func (e *envReader) integer(name string, def int) int {
	v, ok := e.get(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 65535 {
		e.errs = append(e.errs, fmt.Sprintf("%s=%s: must be a port from 0 to 65535", name, quote(v)))
		return def
	}
	return n
}

func (e *envReader) boolean(name string, def bool) bool {
	v, ok := e.get(name)
	if !ok {
		return def
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Sprintf("%s=%s: must be true or false", name, quote(v)))
		return def
	}
	return b
}

// LoadSettings reads the settings from the environment (get: os.LookupEnv).
func LoadSettings(get func(string) (string, bool)) (*Settings, error) {
	e := &envReader{get: get}
	s := &Settings{
		Host: e.str("HOST", "0.0.0.0"), Port: e.integer("PORT", 8080),
		DebugHost: e.str("DEBUG_HOST", "0.0.0.0"), DebugPort: e.integer("DEBUG_PORT", 6070),
		GRPCHost: e.str("GRPC_HOST", "0.0.0.0"), GRPCPort: e.integer("GRPC_PORT", 8081),
		GRPCTLS:  e.boolean("GRPC_SERVER_USE_TLS", false),
		GRPCCert: e.str("GRPC_SERVER_TLS_CERT", ""), GRPCKey: e.str("GRPC_SERVER_TLS_KEY", ""),
		GRPCClientCA: e.str("GRPC_CLIENT_TLS_CACERT", ""), GRPCClientSAN: e.str("GRPC_CLIENT_TLS_SAN", ""),
		LogLevel:    strings.ToLower(e.str("LOG_LEVEL", "WARN")),
		RuntimeRoot: e.str("RUNTIME_ROOT", "/srv/runtime_data/current"),
		RuntimeSub:  e.str("RUNTIME_SUBDIRECTORY", ""), RuntimeApp: e.str("RUNTIME_APPDIRECTORY", "config"),
		IgnoreDotFiles: e.boolean("RUNTIME_IGNOREDOTFILES", false), WatchRoot: e.boolean("RUNTIME_WATCH_ROOT", true),
		MergeDomains:    e.boolean("MERGE_DOMAIN_CONFIG", false),
		HeadersEnabled:  e.boolean("LIMIT_RESPONSE_HEADERS_ENABLED", false),
		LimitHeader:     e.str("LIMIT_LIMIT_HEADER", "RateLimit-Limit"),
		RemainingHeader: e.str("LIMIT_REMAINING_HEADER", "RateLimit-Remaining"),
		ResetHeader:     e.str("LIMIT_RESET_HEADER", "RateLimit-Reset"),
		ShadowMode:      e.boolean("SHADOW_MODE", false), QuotaMode: e.boolean("QUOTA_MODE", false),
		HealthyWithConfig: e.boolean("HEALTHY_WITH_AT_LEAST_ONE_CONFIG_LOADED", false),
		UsePrometheus:     e.boolean("USE_PROMETHEUS", false),
		PrometheusAddr:    e.str("PROMETHEUS_ADDR", ":9090"), PrometheusPath: e.str("PROMETHEUS_PATH", "/metrics"),
	}
	ratio, err := strconv.ParseFloat(e.str("NEAR_LIMIT_RATIO", "0.8"), 32)
	if err != nil || ratio < 0 || ratio > 1 {
		e.errs = append(e.errs, "NEAR_LIMIT_RATIO: must be a number from 0 to 1")
		ratio = 0.8
	}
	s.NearLimitRatio = float32(ratio)
	if v, ok := e.get("LOCAL_CACHE_SIZE_IN_BYTES"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			e.errs = append(e.errs, fmt.Sprintf("LOCAL_CACHE_SIZE_IN_BYTES=%s: must be a number of bytes, 0 for none", quote(v)))
		}
		s.LocalCacheBytes = n
	}
	s.StoreURL = storeURL(e)
	for _, name := range ignoredSettings {
		if _, ok := get(name); ok {
			s.Ignored = append(s.Ignored, name)
		}
	}
	sort.Strings(s.Ignored)
	if len(e.errs) > 0 {
		return nil, fmt.Errorf("settings: %s", strings.Join(e.errs, "; "))
	}
	return s, nil
}

// storeURL makes rl's store URL from envoyproxy/ratelimit's Redis settings
// (REDIS_SOCKET_TYPE tcp, REDIS_TYPE SINGLE, SENTINEL or CLUSTER,
// REDIS_URL, REDIS_AUTH, REDIS_TLS*, REDIS_SENTINEL_AUTH, REDIS_TIMEOUT), or
// takes RL_STORE_URL as it is (any rl URL with its settings: breaker,
// min_replicas, script_mode, ...). RL_STORE_SETTINGS adds query settings
// to the URL made from REDIS_*.
func storeURL(e *envReader) string {
	if u, ok := e.get("RL_STORE_URL"); ok {
		return u
	}
	raw := e.str("REDIS_URL", "/var/run/nutcracker/ratelimit.sock")
	if strings.Contains(raw, "://") {
		return raw // already an rl URL
	}
	if st := strings.ToLower(e.str("REDIS_SOCKET_TYPE", "unix")); st != "tcp" {
		e.errs = append(e.errs, fmt.Sprintf("REDIS_SOCKET_TYPE=%s: rl connects over TCP only; set REDIS_SOCKET_TYPE=tcp and REDIS_URL=host:port", quote(st)))
		return ""
	}
	tls := e.boolean("REDIS_TLS", false)
	auth := e.str("REDIS_AUTH", "")
	cred := ""
	if auth != "" {
		user, pass, found := strings.Cut(auth, ":")
		if found {
			cred = url.PathEscape(user) + ":" + url.PathEscape(pass) + "@"
		} else {
			cred = url.PathEscape(auth) + "@"
		}
	}
	q := url.Values{}
	var u string
	switch typ := strings.ToUpper(e.str("REDIS_TYPE", "SINGLE")); typ {
	case "SINGLE":
		u = "redis://" + cred + raw
		if tls {
			u = "rediss://" + cred + raw
		}
	case "CLUSTER":
		u = "redis+cluster://" + cred + raw
		if tls {
			u = "rediss+cluster://" + cred + raw
		}
	case "SENTINEL":
		// envoyproxy/ratelimit: "master,sentinel1:port,sentinel2:port"
		parts := strings.Split(raw, ",")
		if len(parts) < 2 {
			e.errs = append(e.errs, "REDIS_URL: with REDIS_TYPE=SENTINEL it is master,host:port[,host:port...]")
			return ""
		}
		u = "redis+sentinel://" + cred + strings.Join(parts[1:], ",") + "/" + parts[0]
		if sa := e.str("REDIS_SENTINEL_AUTH", ""); sa != "" {
			q.Set("sentinel_password", sa)
		}
	default:
		e.errs = append(e.errs, fmt.Sprintf("REDIS_TYPE=%s: must be SINGLE, SENTINEL or CLUSTER", quote(typ)))
		return ""
	}
	if tls {
		if v := e.str("REDIS_TLS_CACERT", ""); v != "" {
			q.Set("tls_ca_file", v)
		}
		if v := e.str("REDIS_TLS_CLIENT_CERT", ""); v != "" {
			q.Set("tls_cert_file", v)
		}
		if v := e.str("REDIS_TLS_CLIENT_KEY", ""); v != "" {
			q.Set("tls_key_file", v)
		}
		if e.boolean("REDIS_TLS_SKIP_HOSTNAME_VERIFICATION", false) {
			q.Set("tls_insecure_skip_verify", "true")
		}
	}
	if v, ok := e.get("REDIS_TIMEOUT"); ok {
		if ms, err := parseDurationMS(v); err == nil {
			q.Set("timeout_ms", strconv.FormatInt(ms, 10))
		} else {
			e.errs = append(e.errs, fmt.Sprintf("REDIS_TIMEOUT=%s: %v", quote(v), err))
		}
	}
	out := u
	if len(q) > 0 {
		out += "?" + q.Encode()
	}
	if extra := e.str("RL_STORE_SETTINGS", ""); extra != "" {
		if len(q) > 0 {
			out += "&" + extra
		} else {
			out += "?" + extra
		}
	}
	return out
}

func lookupEnv(name string) (string, bool) { return os.LookupEnv(name) }
