#!/usr/bin/env python3
"""The loopback HTTP client of bench/frameworks/run: one keep-alive
connection, sequential requests to GET /bare, GET /limited (the same app,
the same run; a fresh X-Api-Key each time, so every limited request is a
store round trip that admits) and GET /store, whose body is the
microseconds one of rl's own acquires took, timed inside the app: the
store's round trip as that binding sees it, between requests as the
limited route's is. Prints one JSON line:

  client.py URL FRAMEWORK REQUESTS

Two things keep the comparison about the server:
- The three routes take turns in every order in rotation (the six
  permutations), so each follows each other route equally often: in a fixed
  order /store always came right after /limited, and found rl's I/O thread
  and Redis fresh from a call, while /limited came after an idle /bare and
  /store.
- /limited and /store each acquire a key of their own that no call made
  yet (l1 and s1, ...): /store used to acquire the key /limited had just
  made, an update where /limited's was a new key.
- The responses are read by a few lines over the socket, whose cost hardly
  depends on the header fields: http.client parses each field through the
  email package (about 19,000 instructions a field here, 3-4 us for the two
  RateLimit fields), which counted against the integration as latency it
  added.
"""
import re
import socket
import sys
import time
import urllib.parse

from rotation import measure

CONTENT_LENGTH = re.compile(rb"\r\ncontent-length:[ \t]*(\d+)", re.IGNORECASE)
CHUNKED = re.compile(rb"\r\ntransfer-encoding:[ \t]*chunked", re.IGNORECASE)
CLOSE = re.compile(rb"\r\nconnection:[ \t]*close", re.IGNORECASE)


class Connection:
    """HTTP/1.1 over one keep-alive socket: enough for these apps' replies
    (a Content-Length or chunked body)."""

    def __init__(self, host, port):
        self.address = (host, port)
        self.host = f"{host}:{port}".encode()
        self.connect()

    def connect(self):
        self.sock = socket.create_connection(self.address, timeout=30)
        # No Nagle on the client: a request is one write, but a wait for an
        # ACK the server delays would show as the framework's latency.
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("the server closed the connection")
        self.buffer += data

    def take_line(self):
        while (end := self.buffer.find(b"\r\n")) < 0:
            self.fill()
        line, self.buffer = self.buffer[:end], self.buffer[end + 2:]
        return line

    def take(self, n):
        while len(self.buffer) < n:
            self.fill()
        data, self.buffer = self.buffer[:n], self.buffer[n:]
        return data

    def get(self, path, key):
        """(status, body) of GET path; then (untimed, before the next
        request) a new connection if the server closes this one."""
        self.sock.sendall(b"GET %s HTTP/1.1\r\nHost: %s\r\nX-Api-Key: %s\r\n\r\n" % (path, self.host, key))
        while (end := self.buffer.find(b"\r\n\r\n")) < 0:
            self.fill()
        head, self.buffer = self.buffer[:end + 2], self.buffer[end + 4:]
        status = int(head[9:12])
        self.closing = CLOSE.search(head) is not None
        if m := CONTENT_LENGTH.search(head):
            return status, self.take(int(m.group(1)))
        if not CHUNKED.search(head):
            raise ValueError(f"a reply with neither Content-Length nor chunked: {head[:200]!r}")
        body = b""
        while size := int(self.take_line().split(b";")[0], 16):
            body += self.take(size)
            self.take_line()
        while self.take_line():  # trailer fields, up to the empty line
            pass
        return status, body


def main():
    url, framework, requests = sys.argv[1], sys.argv[2], int(sys.argv[3])
    parts = urllib.parse.urlsplit(url)
    conn = Connection(parts.hostname, parts.port)

    def timed_call(route, key):
        began = time.perf_counter_ns()
        status, body = conn.get(b"/" + route.encode(), key.encode())
        took = (time.perf_counter_ns() - began) / 1000
        if conn.closing:  # Tomcat and Reactor Netty close one after its 100th request
            conn.sock.close()
            conn.connect()
        if status != 200:
            sys.exit(f"client.py: {framework} /{route}: HTTP {status}")
        return took, body

    measure(framework, requests, timed_call)


if __name__ == "__main__":
    main()
