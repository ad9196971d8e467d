// Why a stream failed, by OpenSSL's library and reason codes and Asio's
// error values: each rule of stream_fault.cpp, and that the library counts
// (the same reason number from another library is not the same fault).
#include "redis/stream_fault.h"

#include <gtest/gtest.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/error.hpp>
#include <boost/asio/ssl/error.hpp>

namespace rl::redis {
namespace {

// What Asio makes of an OpenSSL failure: ERR_get_error()'s packed code.
boost::system::error_code openssl_error(int lib, int reason) {
  return {static_cast<int>(ERR_PACK(lib, 0, reason)), boost::asio::error::get_ssl_category()};
}

TEST(StreamFault, APeerThatClosedIsClosed) {
  EXPECT_EQ(classify_stream_error(boost::asio::error::eof), StreamFault::closed);
  // TLS without close_notify (OpenSSL 3: unexpected EOF while reading).
  EXPECT_EQ(classify_stream_error(boost::asio::ssl::error::stream_truncated), StreamFault::closed);
}

TEST(StreamFault, TheSocketsOwnErrorsAreTheSockets) {
  EXPECT_EQ(classify_stream_error(boost::asio::error::connection_reset), StreamFault::socket);
  EXPECT_EQ(classify_stream_error(boost::asio::error::broken_pipe), StreamFault::socket);
  EXPECT_EQ(classify_stream_error(boost::asio::error::timed_out), StreamFault::socket);
}

TEST(StreamFault, AChainOrNameThatDoesNotVerifyIsTheServers) {
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_CERTIFICATE_VERIFY_FAILED)),
            StreamFault::server_not_verified);
  EXPECT_EQ(
      classify_stream_error(openssl_error(ERR_LIB_X509, X509_R_CERTIFICATE_VERIFICATION_FAILED)),
      StreamFault::server_not_verified);
}

// Every alert a server sends about the client's certificate, not only the
// three whose words the text rules knew ("certificate required", "alert bad
// certificate", "unknown ca").
TEST(StreamFault, TheServersCertificateAlertsRefuseTheClientCertificate) {
  for (const int reason :
       {SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
        SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE,
        SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED, SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED,
        SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN}) {
    EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, reason)),
              StreamFault::client_cert_refused)
        << ERR_reason_error_string(ERR_PACK(ERR_LIB_SSL, 0, reason));
  }
}

TEST(StreamFault, ARecordThatIsNotTlsIsAPlainPeer) {
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_WRONG_VERSION_NUMBER)),
            StreamFault::not_tls);
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_PACKET_LENGTH_TOO_LONG)),
            StreamFault::not_tls);
}

TEST(StreamFault, AnyOtherTlsFailureIsTls) {
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_TLSV1_ALERT_PROTOCOL_VERSION)),
            StreamFault::tls);
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_NO_PROTOCOLS_AVAILABLE)),
            StreamFault::tls);
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_SSL, SSL_R_TLSV1_ALERT_INTERNAL_ERROR)),
            StreamFault::tls);
}

// A reason is a number within its library: the same number from another
// library is not the SSL reason it equals.
TEST(StreamFault, TheLibraryCounts) {
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_X509, SSL_R_CERTIFICATE_VERIFY_FAILED)),
            StreamFault::tls);
  EXPECT_EQ(classify_stream_error(openssl_error(ERR_LIB_EVP, SSL_R_WRONG_VERSION_NUMBER)),
            StreamFault::tls);
  EXPECT_EQ(
      classify_stream_error(openssl_error(ERR_LIB_SSL, X509_R_CERTIFICATE_VERIFICATION_FAILED)),
      StreamFault::tls);
}

TEST(StreamFault, OnlyOpenSslFaultsAreTls) {
  EXPECT_FALSE(is_tls_fault(StreamFault::closed));
  EXPECT_FALSE(is_tls_fault(StreamFault::socket));
  for (const StreamFault f : {StreamFault::server_not_verified, StreamFault::client_cert_refused,
                              StreamFault::not_tls, StreamFault::tls})
    EXPECT_TRUE(is_tls_fault(f));
}

}  // namespace
}  // namespace rl::redis
