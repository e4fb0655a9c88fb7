#!/usr/bin/env python3
# CPU and context switches per job of each thread of some processes (the lead's tool, kept).
# snap FILE PID...: a snapshot of every thread of the PIDs; diff BEFORE AFTER JOBS: per job between
# two snapshots (CPU from /proc/PID/task/TID/stat in 10 ms ticks, voluntary and involuntary switches).
import os, sys, json
def snap(pids):
    out = {}
    for p in pids:
        for t in os.listdir(f"/proc/{p}/task"):
            try:
                stat = open(f"/proc/{p}/task/{t}/stat").read()
                comm = stat[stat.index('(')+1:stat.rindex(')')]
                f = stat[stat.rindex(')')+2:].split()
                cpu = int(f[11]) + int(f[12])
                st = dict(l.split(':\t') for l in open(f"/proc/{p}/task/{t}/status").read().splitlines() if ':\t' in l)
                out[f"{p}/{t}"] = (comm, cpu, int(st['voluntary_ctxt_switches']), int(st['nonvoluntary_ctxt_switches']))
            except FileNotFoundError: pass
    return out
if sys.argv[1] == 'snap':
    json.dump(snap(sys.argv[3:]), open(sys.argv[2], 'w'))
else:
    a = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3])); n = int(sys.argv[4])
    tot = {}
    for k in sorted(b):
        if k not in a: continue
        c = b[k][0]; d = [b[k][i] - a[k][i] for i in (1, 2, 3)]
        if d[0] == 0 and d[1] == 0: continue
        print(f"{k:14} {c:16} cpu_ms/job={d[0]*10/n:.3f} vcs/job={d[1]/n:.2f} ivcs/job={d[2]/n:.2f}")
