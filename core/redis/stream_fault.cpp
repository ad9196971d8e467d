#include "stream_fault.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace rl::redis {
namespace {

// The alerts a server sends about the client's certificate: it wants one
// (TLS 1.3), or the one it got is bad, of a CA it does not know, expired,
// revoked, of a kind it does not take, or otherwise unacceptable.
bool refuses_client_certificate(int reason) {
  switch (reason) {
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
    case SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN: return true;
    default: return false;
  }
}

// A record header that is not TLS's: a plain server's reply ("-ERR ...")
// read as a version, or as a length.
bool is_not_tls(int reason) {
  return reason == SSL_R_WRONG_VERSION_NUMBER || reason == SSL_R_PACKET_LENGTH_TOO_LONG;
}

}  // namespace

StreamFault classify_stream_error(const boost::system::error_code& ec) {
  namespace asio = boost::asio;
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated)
    return StreamFault::closed;
  if (ec.category() != asio::error::get_ssl_category()) return StreamFault::socket;
  // Asio's value is OpenSSL's packed error code (ERR_get_error).
  const auto e = static_cast<unsigned long>(static_cast<unsigned int>(ec.value()));
  // The chain's check, when X509 reports it before SSL does.
  if (ERR_GET_LIB(e) == ERR_LIB_X509 && ERR_GET_REASON(e) == X509_R_CERTIFICATE_VERIFICATION_FAILED)
    return StreamFault::server_not_verified;
  if (ERR_GET_LIB(e) != ERR_LIB_SSL) return StreamFault::tls;
  const int reason = ERR_GET_REASON(e);
  if (reason == SSL_R_CERTIFICATE_VERIFY_FAILED) return StreamFault::server_not_verified;
  if (refuses_client_certificate(reason)) return StreamFault::client_cert_refused;
  if (is_not_tls(reason)) return StreamFault::not_tls;
  return StreamFault::tls;
}

}  // namespace rl::redis
