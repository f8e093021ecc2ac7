#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
#
# udp-hub.py - an Ethernet hub for three or more test guests, over unicast
# UDP on the loopback interface (no multicast needed).
#
# Usage: udp-hub.py HUB_PORT_1:GUEST_PORT_1 HUB_PORT_2:GUEST_PORT_2 ...
#
# Guest K runs with
#   -netdev socket,id=n0,udp=127.0.0.1:HUB_PORT_K,localaddr=127.0.0.1:GUEST_PORT_K
# so each guest talks to its own hub port.  Every frame received on hub port
# K is sent to every other guest J, from hub port J to GUEST_PORT_J: a shared
# Ethernet segment, like a hub.  vm-run.sh starts it for runs with more than
# two guests and stops it (SIGTERM) when the guests have exited.

import select
import signal
import socket
import sys


def main():
    pairs = []
    for arg in sys.argv[1:]:
        hub, guest = arg.split(":")
        pairs.append((int(hub), int(guest)))
    if len(pairs) < 2:
        sys.exit("usage: udp-hub.py HUB_PORT:GUEST_PORT HUB_PORT:GUEST_PORT...")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    socks = []
    for hub, _ in pairs:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", hub))
        socks.append(s)
    index = {s.fileno(): i for i, s in enumerate(socks)}
    while True:
        ready, _, _ = select.select(socks, [], [])
        for s in ready:
            k = index[s.fileno()]
            try:
                frame = s.recv(65536)
            except OSError:
                continue
            for j, (_, guest) in enumerate(pairs):
                if j != k:
                    try:
                        socks[j].sendto(frame, ("127.0.0.1", guest))
                    except OSError:
                        pass  # that guest is not (or no longer) there


if __name__ == "__main__":
    main()
