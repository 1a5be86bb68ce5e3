import sys
base = sys.argv[1]; nalone = int(sys.argv[2]); bucket = float(sys.argv[3]) if len(sys.argv) > 3 else 0.5
lat = [tuple(map(int, l.split())) for l in open(base + ".lat")]
cpu = []
for l in open(base + ".cpu"):
    f = l.split(); t = int(f[0]); d = dict(kv.split("=") for kv in f[1:]); cpu.append((t, {k: int(v) for k, v in d.items()}))
def pct(v, p):
    v = sorted(v); return v[min(len(v) - 1, int(p * len(v)))] if v else 0
for name, part in (("alone", lat[:nalone]), ("loaded", lat[nalone:])):
    t0 = part[0][0]; t1 = part[-1][0]
    print(f"{name}: n={len(part)} p50={pct([x[1] for x in part],.5)} p99={pct([x[1] for x in part],.99)}")
    b = t0
    while b < t1:
        e = b + int(bucket * 1e6)
        v = [x[1] for x in part if b <= x[0] < e]
        # cpu delta in the bucket
        cs = [c for c in cpu if b <= c[0] < e]
        if len(cs) >= 2:
            dt = (cs[-1][0] - cs[0][0]) / 1e6
            dd = {k: (cs[-1][1].get(k, 0) - cs[0][1].get(k, 0)) / dt / 10 for k in ("io", "worker", "busy", "writer")}
            cstr = " ".join(f"{k}={v:4.0f}%" for k, v in dd.items())
        else:
            cstr = ""
        print(f"  {(b - t0) / 1e6:5.1f}s n={len(v):5d} p50={pct(v,.5):5d} p99={pct(v,.99):5d} max={max(v) if v else 0:6d} >2.5ms={sum(1 for x in v if x > 2500):3d}  {cstr}")
        b = e
