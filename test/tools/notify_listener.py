#!/usr/bin/env python3
"""A stand-in for systemd's notification socket (NOTIFY_SOCKET, Type=notify).

notify_listener.py SOCKET_PATH OUT_FILE: binds a Unix datagram socket at SOCKET_PATH
and appends every message it receives to OUT_FILE, one line per assignment
(READY=1, STATUS=..., STOPPING=1), flushed at once, until it is killed.
"""
import os
import socket
import sys

path, out_path = sys.argv[1], sys.argv[2]
if os.path.exists(path):
    os.unlink(path)
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
sock.bind(path)
with open(out_path, "a", encoding="utf-8") as out:
    print("listening", file=out, flush=True)
    while True:
        message = sock.recv(65536).decode("utf-8", "replace")
        for line in message.splitlines():
            print(line, file=out, flush=True)
