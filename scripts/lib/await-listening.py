#!/usr/bin/env python3
"""Waits until each server listens on all its ports, or exits, or time is up.

    await-listening.py SECONDS NAME PID PORT[,PORT...] [NAME PID PORTS ...]

Prints one line per server, in the order they settle:
    ready NAME      process PID itself listens on every one of PORTS
    exited NAME     process PID is gone (or a zombie) before that
    timeout NAME    neither within SECONDS
A port counts only when the listening socket is one of PID's own file
descriptors: another process on that port (the port was taken between
choosing it and the server's bind) does not make the server ready. One
process polls /proc for every server, which costs far less on a loaded
machine than a redis-cli per server per poll.
"""
import os
import sys
import time

LISTEN = "0A"


def listening_inodes() -> dict:
    """Maps each listening socket's inode to its local port."""
    inodes = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table) as f:
                next(f)
                for line in f:
                    fields = line.split()
                    if fields[3] == LISTEN:
                        inodes[fields[9]] = int(fields[1].rsplit(":", 1)[1], 16)
        except FileNotFoundError:
            pass
    return inodes


def socket_inodes(pid: int) -> set:
    found = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                found.add(target[8:-1])
    except OSError:
        pass
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            # The state follows the command name, which is in parentheses.
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def main() -> None:
    deadline = time.monotonic() + float(sys.argv[1])
    args = sys.argv[2:]
    pending = {
        args[i]: (int(args[i + 1]), {int(p) for p in args[i + 2].split(",")})
        for i in range(0, len(args), 3)
    }
    while pending:
        listening = listening_inodes()
        for name, (pid, ports) in list(pending.items()):
            own = {listening[i] for i in socket_inodes(pid) if i in listening}
            if ports <= own:
                verdict = "ready"
            elif not alive(pid):
                verdict = "exited"
            elif time.monotonic() > deadline:
                verdict = "timeout"
            else:
                continue
            print(verdict, name, flush=True)
            del pending[name]
        if pending:
            time.sleep(0.02)


if __name__ == "__main__":
    main()
