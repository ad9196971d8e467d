package main

// gRPC over TLS, and mutual TLS: a client without a certificate signed by
// GRPC_CLIENT_TLS_CACERT is refused, one with it is served.

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	pb "github.com/envoyproxy/go-control-plane/envoy/service/ratelimit/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "rl test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue writes a certificate for name (and 127.0.0.1) and its key into dir.
func (ca *testCA) issue(t *testing.T, dir, name string, usage x509.ExtKeyUsage) (certFile, keyFile string) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		DNSNames: []string{name}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kb, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+".key")
	_ = os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	_ = os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600)
	return certFile, keyFile
}

func TestGRPCMutualTLS(t *testing.T) {
	dir := t.TempDir()
	ca := newCA(t)
	caFile := filepath.Join(dir, "ca.pem")
	_ = os.WriteFile(caFile, ca.pem, 0o600)
	serverCert, serverKey := ca.issue(t, dir, "ratelimit.test", x509.ExtKeyUsageServerAuth)
	clientCert, clientKey := ca.issue(t, dir, "envoy.test", x509.ExtKeyUsageClientAuth)
	r := startRedis(t)
	s := startRL(t, r.Addr(), map[string]string{"d.yaml": "domain: d\ndescriptors:\n  - key: k\n    rate_limit: {unit: hour, requests_per_unit: 5}\n"},
		"GRPC_SERVER_USE_TLS=true", "GRPC_SERVER_TLS_CERT="+serverCert, "GRPC_SERVER_TLS_KEY="+serverKey,
		"GRPC_CLIENT_TLS_CACERT="+caFile, "GRPC_CLIENT_TLS_SAN=envoy.test")
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca.pem)
	call := func(certs []tls.Certificate) error {
		creds := credentials.NewTLS(&tls.Config{RootCAs: pool, Certificates: certs, ServerName: "ratelimit.test"})
		conn, err := grpc.NewClient("127.0.0.1:"+strconv.Itoa(s.GRPCPort), grpc.WithTransportCredentials(creds))
		if err != nil {
			return err
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := pb.NewRateLimitServiceClient(conn).ShouldRateLimit(ctx, request("d", 0, entry("k", "v")))
		if err == nil && resp.OverallCode != pb.RateLimitResponse_OK {
			t.Fatalf("answer %v", resp)
		}
		return err
	}
	if err := call(nil); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	pair, err := tls.LoadX509KeyPair(clientCert, clientKey)
	if err != nil {
		t.Fatal(err)
	}
	if err := call([]tls.Certificate{pair}); err != nil {
		t.Fatalf("the client with its certificate: %v", err)
	}
	other, otherKey := ca.issue(t, dir, "intruder.test", x509.ExtKeyUsageClientAuth)
	pair, _ = tls.LoadX509KeyPair(other, otherKey)
	if err := call([]tls.Certificate{pair}); err == nil {
		t.Fatal("a client certificate that does not name GRPC_CLIENT_TLS_SAN was served")
	}
}
