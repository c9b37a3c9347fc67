#!/usr/bin/env python3
"""Accuracy of a `timeless validate` run per rank count and overall: median |error|, max
|error| and mean signed error of validate.csv, and the spread of the measured runs
((max - min) / median). Usage: summary.py VALIDATE_CSV [ERROR_COLUMN]
ERROR_COLUMN: error_pct (default), another prediction column (predicted_kernel_secs, ...)
against the measured median, or `vs_traced`: the prediction against the traced run's own wall
time (the same run the trace comes from: no run-to-run noise, but the tracer's slowdown), or
`vs_span`: against the traced run's span from MPI_Init to MPI_Finalize (`traced_span_secs`,
from its timestamps: what the replay's simulated time covers, without the launch, the
program's work outside MPI or the tracer's start and end)."""
import csv
import statistics
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
col = sys.argv[2] if len(sys.argv) > 2 else "error_pct"


def err(r):
    if col == "error_pct":
        return float(r[col])
    if col in ("vs_traced", "vs_span"):
        t = float(r["traced_secs" if col == "vs_traced" else "traced_span_secs"])
        return 100 * (float(r["predicted_secs"]) - t) / t
    m = float(r["measured_median_secs"])
    return 100 * (float(r[col]) - m) / m


def line(name, rs):
    e = [err(r) for r in rs]
    spread = [100 * (float(r["measured_max_secs"]) - float(r["measured_min_secs"]))
              / float(r["measured_median_secs"]) for r in rs]
    worst = max(rs, key=lambda r: abs(err(r)))
    return (f"{name:<8} {len(rs):>2} cases  median |error| {statistics.median(abs(x) for x in e):5.2f}%"
            f"  max {max(abs(x) for x in e):5.2f}% ({worst['program']} {worst['ranks']})"
            f"  mean signed {statistics.mean(e):+6.2f}%  low in {sum(x < 0 for x in e)}/{len(e)}"
            f"  measured spread median {statistics.median(spread):4.1f}%")


print(f"error column: {col}")
for n in sorted({int(r["ranks"]) for r in rows}):
    print(line(f"N={n}", [r for r in rows if int(r["ranks"]) == n]))
print(line("all", rows))
