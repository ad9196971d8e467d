// Why a read, a write or a TLS handshake of a Stream failed, decided by
// OpenSSL's reason codes (ERR_GET_LIB, ERR_GET_REASON) and Asio's error
// values, never by the words of OpenSSL's messages, which change between
// OpenSSL versions. The handshake and the connection turn a fault into their
// own message (handshake.cpp, connection.cpp); this only says which it is.
#pragma once

#include <boost/system/error_code.hpp>

namespace rl::redis {

enum class StreamFault {
  closed,               // the peer closed: end of stream, or TLS without close_notify
  socket,               // the socket's own error (reset, refused, timed out, ...)
  server_not_verified,  // the server's certificate failed verification
  client_cert_refused,  // the server wanted a client certificate, or refused ours
  not_tls,              // what the peer sent is not TLS (a plain port)
  tls,                  // any other TLS failure
};

StreamFault classify_stream_error(const boost::system::error_code& ec);

// Whether the fault is a TLS one (OpenSSL's), not the socket's or a close.
inline bool is_tls_fault(StreamFault f) {
  return f != StreamFault::closed && f != StreamFault::socket;
}

}  // namespace rl::redis
