"""Write the standard drive cycles of drivelink's `DriveCycle` block as CSV files.

Sources (see README.md):
- udds, hwfet, us06, wltc3b: the cycle files FASTSim 2.1.5 ships in
  `fastsim/resources/cycles/` (EPA's and UN GTR 15's 1 Hz speed tables; FASTSim stores
  them in m/s). US06 is written back in mph and WLTC 3b in km/h, the units of their
  published tables (FASTSim's values are exactly those tables' 0.1 mph / 0.1 km/h steps);
  UDDS and HWFET stay in FASTSim's m/s.
- ftp75: UDDS (cold start, phases 1 and 2, 0-1369 s) followed by its first 505 s again
  (the hot start, phase 3), without the 10-minute soak: 1874 s of driving.
- nedc: the piecewise-linear definition of UN R83 Annex 4a (manual gearbox: gear changes
  hold the speed): four elementary urban cycles (ECE-15, 195 s) and the extra-urban cycle
  (EUDC, 400 s), breakpoints as transcribed by the JRC's co2mpas (cycle/NEDC.py).

Usage: python make_cycles.py FASTSIM_CYCLES_DIR  (writes next to this script)
"""
import csv
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
MPH = 0.44704


def read_fastsim(path):
    with open(path, encoding="utf-8-sig") as f:
        rows = [r for r in csv.reader(f)][1:]
    return [(float(r[0]), float(r[1])) for r in rows if r and r[0].strip()]


def write(name, header, rows, fmt):
    with open(os.path.join(HERE, name + ".csv"), "w", newline="\n") as f:
        f.write("time," + header + "\n")
        for t, v in rows:
            f.write(("%g," + fmt + "\n") % (t, v))


def nedc():
    ece = [(0, 0), (11, 0), (15, 15), (23, 15), (25, 10), (28, 0), (49, 0), (54, 15),
           (56, 15), (61, 32), (85, 32), (93, 10), (96, 0), (117, 0), (122, 15),
           (124, 15), (133, 35), (135, 35), (143, 50), (155, 50), (163, 35), (176, 35),
           (178, 35), (185, 10), (188, 0), (195, 0)]
    eudc = [(0, 0), (20, 0), (25, 15), (27, 15), (36, 35), (38, 35), (46, 50), (48, 50),
            (61, 70), (111, 70), (119, 50), (188, 50), (201, 70), (251, 70), (286, 100),
            (316, 100), (336, 120), (346, 120), (362, 80), (370, 50), (380, 0), (400, 0)]
    out = list(ece)
    for k in range(1, 4):
        out += [(t + 195 * k, v) for t, v in ece[1:]]
    out += [(t + 780, v) for t, v in eudc[1:]]
    return out


def main(src):
    udds = read_fastsim(os.path.join(src, "udds.csv"))
    write("udds", "speed [m/s]", udds, "%.9g")
    write("hwfet", "speed [m/s]", read_fastsim(os.path.join(src, "hwfet.csv")), "%.9g")
    write("us06", "speed [mph]",
          [(t, round(v / MPH, 1)) for t, v in read_fastsim(os.path.join(src, "us06.csv"))],
          "%.1f")
    write("wltc3b", "speed [km/h]",
          [(t, round(v * 3.6, 1)) for t, v in read_fastsim(os.path.join(src, "wltc_3b.csv"))],
          "%.1f")
    assert udds[505][0] == 505 and udds[505][1] == 0.0, "UDDS phase 1 ends at rest at 505 s"
    ftp = udds + [(1369 + t, v) for t, v in udds[1:506]]
    write("ftp75", "speed [m/s]", ftp, "%.9g")
    write("nedc", "speed [km/h]", nedc(), "%g")


if __name__ == "__main__":
    main(sys.argv[1])
