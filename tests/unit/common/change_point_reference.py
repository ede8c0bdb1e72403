#!/usr/bin/env python3
# The reference values of change_point_test.cc: Pettitt's test computed from its definition with the
# standard library only (no SciPy). Run: python3 tests/unit/common/change_point_reference.py
# Independent reference: Pettitt's U(t) by its double-sum definition, K = max |U|, p = 2exp(-6K^2/(n^3+n^2)).
import math, statistics
def sgn(d): return (d > 0) - (d < 0)
def pettitt(x):
    n = len(x)
    us = [sum(sgn(x[i]-x[j]) for i in range(t) for j in range(t, n)) for t in range(1, n)]
    k = max(abs(u) for u in us)
    # the location: the split with the least sum of absolute deviations from each side's median
    # (the first on a tie); the test: Pettitt's K over every split
    cost = lambda seg: sum(abs(v - statistics.median(seg)) for v in seg)
    costs = [cost(x[:t]) + cost(x[t:]) for t in range(1, n)]
    t = costs.index(min(costs)) + 1
    p = min(1.0, 2*math.exp(-6*k*k/(n**3+n**2)))
    return dict(U=us, costs=[round(c, 6) for c in costs], t=t, u=us[t-1], K=k, p=p, before=statistics.median(x[:t]), after=statistics.median(x[t:]))
cases = {
 'seed': [52.9, 52.9, 30.0, 28.2],
 'seed3': [52.9, 52.9, 30.0],
 'tie3': [52.9, 52.6, 30.0],
 'tie4': [52.9, 52.6, 30.0, 28.2],
 'step12': [52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 29.1, 28.8, 29.4, 28.9, 29.0, 29.3],
 'fast1': [80.0, 52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 53.2, 52.5, 53.3],
 'slow7': [52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 30.0, 53.2, 52.5, 53.3],
 'late7': [52.9, 53.1, 52.7, 53.0, 52.8, 52.6, 29.1],
 'rise': [20.0, 21.0, 19.5, 20.5, 40.0, 41.0, 39.0, 40.5],
}
for name, x in cases.items():
    print(name, pettitt(x))
print('rise16', pettitt([20.0, 21.0, 19.5, 20.5, 20.2, 19.8, 20.1, 20.4, 40.0, 41.0, 39.0, 40.5, 40.2, 39.8, 40.1, 40.4]))
print('demo4', pettitt([52.882259412160806, 52.872007444378646, 30.141968672447227, 28.031672051862326]))
