#!/usr/bin/env python3
"""The noise floor of the accuracy targets on this machine: how a perfect predictor would
score against the measured medians, given how the untraced runs of a case spread.

    noise.py VALIDATE_CSV... [--reps 5,9,15,25] [--trials 2000] [--seed 1]

Every run of every case in the given validate.csv files, divided by the median of its case's
other runs (leave-one-out: dividing by a median that includes the run would make one sample in
five exactly 1), is one sample of the run-to-run noise (pooled: the spread is about the same
across cases here). A
trial draws, for each of 21 cases, `reps` runs from that pool, takes their median as the
"measured" time and scores a predictor that is exactly right (true time = 1): median |error|,
max |error|, mean signed error. Printed per rep count: the medians of those over the trials,
and the share of trials meeting issue 19's targets (median <= 2 %, max <= 5 %, mean within
+-1 %). A share well below 1 means the targets cannot be shown with that many repetitions
here, whatever the model. Python standard library only."""
import argparse
import csv
import random
import statistics as st

ap = argparse.ArgumentParser(description=__doc__,
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("csv", nargs="+")
ap.add_argument("--reps", default="5,9,15,25")
ap.add_argument("--cases", type=int, default=21)
ap.add_argument("--trials", type=int, default=2000)
ap.add_argument("--seed", type=int, default=1)
a = ap.parse_args()
random.seed(a.seed)
pool = []
for path in a.csv:
    for r in csv.DictReader(open(path)):
        xs = [float(x) for x in r["measured_secs"].split()]
        if len(xs) >= 3:
            pool += [x / st.median(xs[:i] + xs[i + 1:]) for i, x in enumerate(xs)]
print(f"{len(pool)} runs pooled from {len(a.csv)} file(s); standard deviation of run / other "
      f"runs' median {100 * st.pstdev(pool):.1f} %")
print("reps  median|e|  max|e|  mean  P(targets met by a perfect predictor)")
for reps in [int(x) for x in a.reps.split(",")]:
    meds, maxs, means, ok = [], [], [], 0
    for _ in range(a.trials):
        errs = [100 * (1 / st.median(random.choice(pool) for _ in range(reps)) - 1)
                for _ in range(a.cases)]
        m, x, s = st.median(abs(e) for e in errs), max(abs(e) for e in errs), st.mean(errs)
        meds.append(m), maxs.append(x), means.append(s)
        ok += m <= 2 and x <= 5 and abs(s) <= 1
    print(f"{reps:4d}  {st.median(meds):8.1f}%  {st.median(maxs):5.1f}%  "
          f"{st.median(means):+4.1f}%  {ok / a.trials:.2f}")
