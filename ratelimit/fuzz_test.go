package main

// Go native fuzz targets (scripts/fuzz runs them beside the C++ ones): the
// config parser and the request decoder never panic, and what they accept
// goes through matching and key making without one. Inputs that break them
// land in testdata/fuzz/<target>/, which go test then runs every time.

import (
	"testing"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

func FuzzConfigParse(f *testing.F) {
	f.Add([]byte(compatConfig))
	f.Add([]byte(rlRulesConfig))
	f.Add([]byte("domain: d\ndescriptors:\n  - key: a\n    value: \"x*y*\"\n    share_threshold: true\n    rate_limit: {unit: second, requests_per_unit: 1}\n"))
	f.Add([]byte("domain: [\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig("fuzz.yaml", data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error without a message")
			}
			return
		}
		for domain := range cfg.domains {
			for _, seq := range compatSequences() {
				for _, req := range seq {
					for _, d := range req.Descriptors {
						if m := cfg.Lookup(domain, d); m != nil {
							_ = LimiterKey(d, m.SharedValues)
						}
					}
				}
			}
		}
	})
}

func FuzzRequestDecode(f *testing.F) {
	for _, seq := range compatSequences() {
		b, _ := proto.Marshal(seq[0])
		f.Add(b, false)
		j, _ := protojson.Marshal(seq[0])
		f.Add(j, true)
	}
	cfg, err := ParseConfig("compat.yaml", []byte(compatConfig))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte, json bool) {
		var req pb.RateLimitRequest
		if json {
			err = protojson.Unmarshal(data, &req)
		} else {
			err = proto.Unmarshal(data, &req)
		}
		if err != nil || checkRequest(&req) != nil {
			return
		}
		hits := hitsAddends(&req)
		for i, d := range req.Descriptors {
			if hits[i] == 0 && d.GetHitsAddend() == nil {
				t.Fatalf("descriptor %d: hits 0 without its own hits_addend", i)
			}
			m := cfg.Lookup(req.Domain, d)
			var shared []string
			if m != nil {
				shared = m.SharedValues
			}
			if k := LimiterKey(d, shared); len(k) == 0 || len(k) > 512 {
				t.Fatalf("key of %d bytes", len(k))
			}
		}
	})
}
