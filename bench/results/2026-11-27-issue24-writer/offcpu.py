#!/usr/bin/env python3
"""Where polld's quiet workers slept inside a request: `perf script` output of
`perf record -e sched:sched_switch --call-graph dwarf` on polld (stdin), the
switches of `anonpoll-worker` threads that went to sleep (state S or D),
idle waits for a request (`recv_after`) left out, counted by their first
frames in polld, SQLite or std's channel and locks."""
import collections, re, sys

counts, total = collections.Counter(), 0
for block in sys.stdin.read().split('\n\n'):
    lines = block.strip().split('\n')
    if not lines or not lines[0].startswith('anonpoll-worker'):
        continue
    state = re.search(r'prev_state=(\S+)', lines[0])
    if not state or state.group(1) not in ('S', 'D'):
        continue
    frames = [l.strip().split(' ', 1)[1] for l in lines[1:] if l.strip() and not l.strip().startswith('ffffffff')]
    if any('recv_after' in f for f in frames):
        continue
    total += 1
    marks = ('anonpoll::', 'rusqlite', 'sqlite3', 'mpmc', 'Mutex', 'RwLock', 'oneshot')
    key = [f[:110] for f in frames if any(m in f for m in marks)][:5]
    counts[' | '.join(key)] += 1
print(f'{total} sleeps of quiet workers inside a request')
for k, v in counts.most_common(12):
    print(v, k, '\n')
