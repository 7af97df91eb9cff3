"""Peer for the kernel benchmark: the 1,000-lag chain of benches/netlists/tf_chain_1000.json
written by hand as vectorised numpy and integrated with scipy's solve_ivp(RK45).

Each lag 1/(tau*s + 1) is integrated in its output form y_k' = (u_k - y_k)/tau, with
u_0 = 1 (the Constant) and u_k = y_(k-1): the same transfer functions as the netlist, from
rest, with the netlist's solver settings (rtol 1e-6, atol 1e-8, 10 s).

Prints: the last lag's value at 10 s, the steps and derivative evaluations, and the fastest
wall time of solve_ivp over the repeats in ms.
Run: python benches/peer/tf_chain_scipy.py [N] [repeats]
"""
import sys
import time

import numpy as np
from scipy.integrate import solve_ivp

N = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
REPEATS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
TAU = 0.005


def main():
    nfev = [0]
    u = np.empty(N)

    def f(t, y):
        nfev[0] += 1
        u[0] = 1.0
        u[1:] = y[:-1]
        return (u - y) / TAU

    best = None
    sol = None
    for _ in range(REPEATS):
        nfev[0] = 0
        t0 = time.perf_counter()
        sol = solve_ivp(f, (0.0, 10.0), np.zeros(N), method="RK45", rtol=1e-6, atol=1e-8)
        wall = time.perf_counter() - t0
        best = wall if best is None else min(best, wall)
    print(f"y_last(10) = {sol.y[-1, -1]:.10f}")
    print(f"steps = {len(sol.t) - 1}, rhs_evals = {nfev[0]}")
    print(f"wall_ms = {best * 1e3:.1f}")


if __name__ == "__main__":
    main()
