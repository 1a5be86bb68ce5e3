import os, sys, time
pid = sys.argv[1]; out = open(sys.argv[2], "w")
hz = os.sysconf("SC_CLK_TCK")
while os.path.exists(f"/proc/{pid}"):
    t = time.time()
    c = {}
    try:
        for th in os.listdir(f"/proc/{pid}/task"):
            try:
                comm = open(f"/proc/{pid}/task/{th}/comm").read().strip()
                st = open(f"/proc/{pid}/task/{th}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            k = comm.split("-")[1] if "-" in comm else comm
            c[k] = c.get(k, 0) + int(st[11]) + int(st[12])
    except OSError:
        break
    out.write("%d %s\n" % (int(t * 1e6), " ".join(f"{k}={v * 1000 // hz}" for k, v in sorted(c.items()))))
    out.flush()
    time.sleep(0.1)
