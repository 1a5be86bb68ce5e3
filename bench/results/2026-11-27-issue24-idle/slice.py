#!/usr/bin/env python3
# slice.py PID SLICE_US kind...: sets the EEVDF custom slice (sched_attr.sched_runtime) of polld's threads named *-kind*
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
pid, us, kinds = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
SYS_sched_setattr = 314
n = 0
for t in os.listdir(f"/proc/{pid}/task"):
    comm = open(f"/proc/{pid}/task/{t}/comm").read().strip()
    if not any(f"-{k}" in comm for k in kinds):
        continue
    nice = int(open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")",1)[1].split()[16])
    # size, policy, flags, nice, priority, runtime, deadline, period
    attr = struct.pack("IIQiIQQQ", 48, 0, 0, nice, 0, us*1000, 0, 0)
    buf = ctypes.create_string_buffer(attr, 48)
    r = libc.syscall(SYS_sched_setattr, int(t), buf, 0)
    if r != 0:
        print("fail", t, comm, ctypes.get_errno(), file=sys.stderr)
    else:
        n += 1
print("set", n, file=sys.stderr)
