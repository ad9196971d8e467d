#include "stream.h"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "error.h"
#include "quote.h"

namespace rl::redis {
namespace {

namespace ssl = boost::asio::ssl;

bool is_ip_address(const std::string& host) {
  unsigned char address[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), address) == 1 ||
         inet_pton(AF_INET6, host.c_str(), address) == 1;
}

// OpenSSL's reason for the last failure ("no such file", "key values
// mismatch"), without the library's numeric prefix.
std::string reason_of(const boost::system::error_code& ec) {
  std::string why = ec.message();
  if (const unsigned long e = ERR_peek_last_error(); e != 0) {
    if (const char* r = ERR_reason_error_string(e)) why = r;
  }
  ERR_clear_error();
  return why;
}

// A file that cannot be opened says why in the system's words ("No such
// file or directory"), which OpenSSL reduces to "system lib".
void check_readable(const char* key, const std::string& path) {
  if (FILE* f = std::fopen(path.c_str(), "r")) {
    std::fclose(f);
    return;
  }
  fail_invalid(std::string(key) + ": cannot read " + quote(path) + ": " + std::strerror(errno));
}

}  // namespace

std::shared_ptr<ssl::context> make_tls_context(const TlsOptions& tls) {
  auto ctx = std::make_shared<ssl::context>(ssl::context::tls_client);
  ctx->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                   ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  boost::system::error_code ec;
  if (!tls.ca_file.empty()) {
    check_readable("tls_ca_file", tls.ca_file);
    if (ctx->load_verify_file(tls.ca_file, ec); ec) {
      fail_invalid("tls_ca_file: cannot load CA certificates from " + quote(tls.ca_file) + ": " +
                   reason_of(ec));
    }
  }
  if (!tls.ca_dir.empty()) {
    struct stat st {};
    if (stat(tls.ca_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
      fail_invalid("tls_ca_dir: " + quote(tls.ca_dir) + " is not a directory");
    }
    if (ctx->add_verify_path(tls.ca_dir, ec); ec) {
      fail_invalid("tls_ca_dir: cannot use " + quote(tls.ca_dir) + ": " + reason_of(ec));
    }
  }
  if (tls.ca_file.empty() && tls.ca_dir.empty()) {
    if (ctx->set_default_verify_paths(ec); ec) {
      fail_invalid("tls: cannot load the system's CA certificates (set tls_ca_file): " +
                   reason_of(ec));
    }
  }
  if (tls.cert_file.empty() != tls.key_file.empty()) {
    fail_invalid(tls.cert_file.empty() ? "tls_key_file: is set without tls_cert_file"
                                       : "tls_cert_file: is set without tls_key_file");
  }
  if (!tls.cert_file.empty()) {
    check_readable("tls_cert_file", tls.cert_file);
    check_readable("tls_key_file", tls.key_file);
    if (ctx->use_certificate_chain_file(tls.cert_file, ec); ec) {
      fail_invalid("tls_cert_file: cannot load a certificate from " + quote(tls.cert_file) + ": " +
                   reason_of(ec));
    }
    // The key file's contents never reach a message, only its path.
    if (ctx->use_private_key_file(tls.key_file, ssl::context::pem, ec); ec) {
      fail_invalid("tls_key_file: cannot load a private key from " + quote(tls.key_file) +
                   " matching tls_cert_file: " + reason_of(ec));
    }
    if (SSL_CTX_check_private_key(ctx->native_handle()) != 1) {
      ERR_clear_error();
      fail_invalid("tls_key_file: " + quote(tls.key_file) + " is not the key of tls_cert_file " +
                   quote(tls.cert_file));
    }
  }
  return ctx;
}

void Stream::async_handshake(const std::string& server_name, bool verify,
                             std::function<void(error_code)> done) {
  if (!tls_) {
    boost::asio::post(io_, [done = std::move(done)] { done({}); });
    return;
  }
  SSL* ssl_handle = tls_->native_handle();
  const bool ip = is_ip_address(server_name);
  // SNI carries names only, never addresses (RFC 6066).
  if (!ip) SSL_set_tlsext_host_name(ssl_handle, server_name.c_str());
  if (verify) {
    tls_->set_verify_mode(ssl::verify_peer);
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl_handle);
    if (ip) {
      X509_VERIFY_PARAM_set1_ip_asc(param, server_name.c_str());
    } else {
      X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
      X509_VERIFY_PARAM_set1_host(param, server_name.c_str(), server_name.size());
    }
  } else {
    tls_->set_verify_mode(ssl::verify_none);
  }
  tls_->async_handshake(ssl::stream_base::client, std::move(done));
}

std::string Stream::verify_failure() const {
  if (!tls_) return {};
  const long result = SSL_get_verify_result(
      const_cast<SSL*>(const_cast<boost::asio::ssl::stream<tcp::socket>&>(*tls_).native_handle()));
  if (result == X509_V_OK) return {};
  return X509_verify_cert_error_string(result);
}

}  // namespace rl::redis
