# Reference values of tests/unit/common/mser_test.cc and tests/unit/agent/runner/steady_state_test.cc:
# python3 tests/unit/common/mser_reference.py prints them (Python 3.11, standard library only).
# Independent MSER-5 reference (White 1997): two-pass sums per d, no shared code with the C++.
def latencies():
    ys = []
    for i in range(20):           # warm-up: 3.0 s falling by 0.1 s a request
        ys.append(3.0 - 0.1 * i)
    for i in range(80):           # steady: 1.0 s +- 0.05 s in a fixed pattern
        ys.append(1.0 + 0.01 * ((i * 7) % 11 - 5))
    return ys

def mser(ys, m=5):
    k = len(ys) // m
    z = [sum(ys[j*m:(j+1)*m]) / m for j in range(k)]
    best = None
    table = []
    for d in range(k // 2 + 1):
        rest = z[d:]
        mean = sum(rest) / len(rest)
        s = sum((x - mean) ** 2 for x in rest) / (k - d) ** 2
        table.append(s)
        if best is None or s < best[1]:
            best = (d, s)
    return k, z, best, table

def q7(sorted_v, p):
    h = (len(sorted_v) - 1) * p
    lo = int(h)
    if lo + 1 >= len(sorted_v): return sorted_v[-1]
    return sorted_v[lo] + (h - lo) * (sorted_v[lo+1] - sorted_v[lo])

ys = latencies()
k, z, best, table = mser(ys)
print("k", k, "d*", best[0], "mser", repr(best[1]))
print("table", [repr(t) for t in table[:6]])
steady = ys[5*best[0]:]
print("n steady", len(steady), "mean", repr(sum(steady)/len(steady)))
s = sorted(steady)
print("p50", repr(q7(s, .5)), "p90", repr(q7(s, .9)))
whole = sorted(ys)
print("whole mean", repr(sum(ys)/len(ys)), "p50", repr(q7(whole,.5)), "p90", repr(q7(whole,.9)))
# tokens: request i gets 100 + (i % 3) * 10 output tokens
toks = [100 + (i % 3) * 10 for i in range(len(ys))]
st = toks[5*best[0]:]
print("steady tok/s", repr(sum(st)/sum(steady)), "whole tok/s", repr(sum(toks)/sum(ys)))
# No warm-up: the steady part alone
k2, z2, best2, t2 = mser(ys[20:])
print("steady-only d*", best2[0], repr(best2[1]))
# a short series: 12 values
short = [5, 4, 1, 1, 1, 1.2, 0.9, 1.1, 1, 1, 1.05, 0.95]
k3, z3, b3, t3 = mser(short)
print("short k", k3, "d*", b3[0], repr(b3[1]), [repr(x) for x in t3])
# 20 slow then 80 steady with noise from the LCG x = (1103515245 x + 12345) mod 2^31, x0 = 42
x = 42
noisy = []
for i in range(100):
    x = (1103515245 * x + 12345) % 2**31
    u = x / 2**31
    noisy.append((2.0 if i < 20 else 1.0) + 0.2 * u)
k4, z4, b4, t4 = mser(noisy)
print("noisy d*", b4[0], repr(b4[1]), "next", repr(t4[b4[0]+1] if b4[0]+1 < len(t4) else None), "prev", repr(t4[b4[0]-1]))
st = noisy[5*b4[0]:]
s = sorted(st)
print("noisy steady mean", repr(sum(st)/len(st)), "p50", repr(q7(s,.5)), "p90", repr(q7(s,.9)))
s = sorted(noisy)
print("noisy whole mean", repr(sum(noisy)/len(noisy)), "p50", repr(q7(s,.5)), "p90", repr(q7(s,.9)))
print("first three", [repr(v) for v in noisy[:3]])
decline = [10 - 0.4 * i for i in range(20)]
k5, z5, b5, t5 = mser(decline)
print("decline k", k5, "d*", b5[0], repr(b5[1]), [repr(t) for t in t5])
