#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one raw SOCK_DIAG_BY_FAMILY request for an SDP family and print
what the kernel answered: "ok N" (N messages, then NLMSG_DONE) or the
errno's name.

Usage: sdp_diag_req.py FAMILY CASE
  valid      a well-formed dump request
  short      the request cut to 8 bytes
  flags      an sdiag_flags bit the interface does not define
  protocol   sdiag_protocol 17 (UDP)
  nodump     no NLM_F_DUMP
"""
import errno
import socket
import struct
import sys

NETLINK_SOCK_DIAG = 4
SOCK_DIAG_BY_FAMILY = 20
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3


def request(family, case):
    proto, flags, nlflags = 0, 0x1, NLM_F_REQUEST | NLM_F_DUMP
    if case == "flags":
        flags = 1 << 9
    elif case == "protocol":
        proto = 17
    elif case == "nodump":
        nlflags = NLM_F_REQUEST
    # struct sdp_diag_req: family, protocol, flags, states, inet_diag_sockid
    payload = struct.pack("=BBHI", family, proto, flags, 0) + bytes(48)
    if case == "short":
        payload = payload[:8]
    return struct.pack("=IHHII", 16 + len(payload), SOCK_DIAG_BY_FAMILY,
                       nlflags, 1, 0) + payload


def main():
    family, case = int(sys.argv[1]), sys.argv[2]
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_SOCK_DIAG)
    s.send(request(family, case))
    n = 0
    while True:
        data = s.recv(65536)
        off = 0
        while off + 16 <= len(data):
            ln, typ = struct.unpack_from("=IH", data, off)
            if typ == NLMSG_ERROR:
                err = -struct.unpack_from("=i", data, off + 16)[0]
                # 95 is both EOPNOTSUPP and ENOTSUP: say it as the kernel does
                name = "EOPNOTSUPP" if err == errno.EOPNOTSUPP else \
                    errno.errorcode.get(err, str(err))
                print(name if err else "ok %d" % n)
                return
            if typ == NLMSG_DONE:
                print("ok %d" % n)
                return
            n += 1
            off += (ln + 3) & ~3


main()
