#!/usr/bin/env python3
"""Prints COUNT distinct free loopback TCP ports, one per line.

    free-ports.py COUNT [EXCLUDED_PORT...]

Every port is bound at once and all sockets are held until the last one is
chosen, so no two of them can be the same port (binding and closing one
socket at a time lets the kernel hand the same port out twice). Ports in
EXCLUDED_PORT (handed out earlier but maybe not bound yet) are skipped.
The sockets close when this exits: a port can still be taken by someone
else before its server binds it, which scripts/lib/redis-servers.sh
notices and retries.
"""
import socket
import sys


def main() -> None:
    count = int(sys.argv[1])
    excluded = {int(port) for port in sys.argv[2:]}
    held, skipped = [], []
    while len(held) < count:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        # An excluded port stays bound (in skipped) so that the kernel does not offer it again.
        (skipped if sock.getsockname()[1] in excluded else held).append(sock)
    print("\n".join(str(sock.getsockname()[1]) for sock in held))


if __name__ == "__main__":
    main()
