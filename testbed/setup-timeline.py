#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Steps of SDP connection setup from the kprobe trace of testbed/bench-setup
(on stdin): each connection's events matched by its rdma_cm_id (or, for a
call and its return, by the thread); median and mean of every step."""
import collections
import re
import sys

LINE = re.compile(r'\s*\S+-(\d+)\s+\[\d+\]\s+\S+\s+([\d.]+): (\w+): \(.*?\)(.*)')
ADDR_RESOLVED, ROUTE_RESOLVED, CONNECT_REQUEST, ESTABLISHED = 0, 2, 4, 9
CALLS = {'sconn': 'connect() system call, in all',
         'qp': 'rdma_create_qp (each end)',
         'acc': 'rdma_accept',
         'dqp': 'rdma_destroy_qp (each end)',
         'did': 'rdma_destroy_id (each end)'}


def main():
    steps = collections.defaultdict(list)
    entered = {}    # (call, thread): time
    marks = {}      # (id, what): time
    first = last = None
    connects = 0

    def step(name, key, t):
        if key in marks:
            steps[name].append(t - marks.pop(key))

    for line in sys.stdin:
        m = LINE.match(line)
        if not m:
            continue
        pid, ts, name, rest = m.groups()
        t = float(ts)
        first = t if first is None else first
        last = t
        f = dict(re.findall(r'(\w+)=(\S+)', rest))
        cid = f.get('id')
        if name in CALLS:
            entered[(name, pid)] = t
            connects += name == 'sconn'
        elif name.endswith('r') and name[:-1] in CALLS:
            start = entered.pop((name[:-1], pid), None)
            if start is not None:
                steps[CALLS[name[:-1]]].append(t - start)
        if name == 'raddr':
            marks[(cid, 'raddr')] = t
        elif name == 'rroute':
            marks[(cid, 'rroute')] = t
        elif name == 'conn':
            step('client: ROUTE_RESOLVED -> rdma_connect (QP, buffers)',
                 (cid, 'route'), t)
            marks[(cid, 'conn')] = t
        elif name == 'acc':
            step('server: CONNECT_REQUEST -> rdma_accept (QP, buffers)',
                 (cid, 'req'), t)
            marks[(cid, 'acc')] = t
        elif name == 'cmev':
            ev = int(f['type'], 0)
            if ev == ADDR_RESOLVED:
                step('client: address resolution', (cid, 'raddr'), t)
            elif ev == ROUTE_RESOLVED:
                step('client: route resolution', (cid, 'rroute'), t)
                marks[(cid, 'route')] = t
            elif ev == CONNECT_REQUEST:
                marks[(cid, 'req')] = t
            elif ev == ESTABLISHED:
                step('client: rdma_connect -> ESTABLISHED (CM handshake)',
                     (cid, 'conn'), t)
                step('server: rdma_accept -> ESTABLISHED (RTU)',
                     (cid, 'acc'), t)
    span = (last - first) if connects else 0
    print(f'{connects} connections in {span:.2f} s traced: '
          f'{1000 * span / max(connects, 1):.2f} ms per cycle')
    for name, v in steps.items():
        v.sort()
        print(f'  {name:54s} n={len(v):5d}  median {1000 * v[len(v) // 2]:6.3f} ms'
              f'  mean {1000 * sum(v) / len(v):6.3f} ms')


if __name__ == '__main__':
    main()
