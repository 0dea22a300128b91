#!/usr/bin/env python3
"""How far an evaluation's best/pick reading lies from the pick's true
ratio, over many committed evaluations of one device.

The truth of a configuration on a matrix is the median of its
ground-truth times (gt-DEV-vN-DT.tsv.gz: the exhaustive race's 2 + 10)
over every table that holds it; a matrix's true best is the least such
median among configurations in at least MIN_TABLES tables.  For each
evaluation (eval-DEV-vN-DT.tsv) auto's pick then has a true ratio,
true best / truth of the pick, to set beside the ratio that evaluation's
confirm() read.  Prints the distribution of the true ratios, of the
reading minus the truth on products under SMALL_US, and every reading
under 96 % with its truth.

    usage: pick_truth.py RESULTS_DIR DEV FIRST_VERSION [LAST_VERSION]
    e.g.   pick_truth.py tests/bench/results h200 93 109
"""
import glob
import gzip
import os
import re
import statistics as st
import sys
from collections import defaultdict

MIN_TABLES = 3
SMALL_US = 5.0
# eval_tuner --tsv: auto's pick, its time and best/pick (0-based columns)
AUTO_PICK, AUTO_MATCH, BEST_US = 28, 30, 7


def versions(paths, pattern, first, last):
    """(version, dtype, path) of the files named by pattern in range."""
    out = []
    for p in paths:
        m = re.match(pattern, os.path.basename(p))
        if m and first <= int(m.group(1)) <= last:
            out.append((int(m.group(1)), m.group(2), p))
    return sorted(out)


def truths(results, dev, first, last):
    """true[(dtype, matrix, config)] and best[(dtype, matrix)]."""
    times = defaultdict(list)
    pat = r'gt-%s-v(\d+)-(f\d+)\.tsv\.gz$' % dev
    for _, _, path in versions(glob.glob(os.path.join(results, 'gt-*.tsv.gz')),
                               pat, first, last):
        with gzip.open(path, 'rt') as f:
            for line in f:
                if line.startswith('#') or line.startswith('matrix\t'):
                    continue
                m, dt, cfg, status, us = line.rstrip('\n').split('\t')[:5]
                if status == 'ok':
                    times[(dt, m, cfg)].append(float(us))
    true = {k: st.median(v) for k, v in times.items()}
    best = {}
    for (dt, m, cfg), us in true.items():
        if len(times[(dt, m, cfg)]) >= MIN_TABLES:
            best[(dt, m)] = min(best.get((dt, m), us), us)
    return true, best


def quantiles(v, qs):
    v = sorted(v)
    return [v[min(len(v) - 1, int(q * len(v)))] for q in qs]


def main(argv):
    if len(argv) < 4:
        sys.exit(__doc__)
    results, dev, first = argv[1], argv[2], int(argv[3])
    last = int(argv[4]) if len(argv) > 4 else 10**9
    true, best = truths(results, dev, first, last)
    ratios, diffs, low = [], [], []
    pat = r'eval-%s-v(\d+)-(f\d+)\.tsv$' % dev
    for v, dt, path in versions(glob.glob(os.path.join(results, 'eval-*.tsv')),
                                pat, first, last):
        with open(path) as f:
            for line in f:
                x = line.rstrip('\n').split('\t')
                if line.startswith('#') or len(x) <= AUTO_MATCH:
                    continue
                key = (dt, x[0], x[AUTO_PICK])
                if key not in true or (dt, x[0]) not in best:
                    continue
                q = min(1.0, best[(dt, x[0])] / true[key])
                read = float(x[AUTO_MATCH])
                ratios.append(q)
                if float(x[BEST_US]) < SMALL_US:
                    diffs.append(read - q)
                if read < 0.96:
                    low.append((v, dt, x[0], x[AUTO_PICK], read, q))
    if not ratios:
        sys.exit('no auto pick of %s in v%d..v%s with a truth (a configuration '
                 'in %d tables or more)' % (dev, first, last, MIN_TABLES))
    p = quantiles(ratios, (0.01, 0.05, 0.5))
    print('auto picks with a truth: %d; true ratio p1 %.3f p5 %.3f median %.3f; '
          'under 95 %%: %d, 96 %%: %d, 97 %%: %d'
          % (len(ratios), p[0], p[1], p[2], sum(q < 0.95 for q in ratios),
             sum(q < 0.96 for q in ratios), sum(q < 0.97 for q in ratios)))
    if diffs:
        d = quantiles(diffs, (0.05, 0.25, 0.5, 0.75, 0.95))
        print('reading - truth, best under %.0f us (%d): p5 %+.3f p25 %+.3f '
              'median %+.3f p75 %+.3f p95 %+.3f' % ((SMALL_US, len(diffs)) + tuple(d)))
    miss = [r for r in low if r[4] < 0.95]
    print('readings under 96 %%: %d, truly under 95 %%: %d; readings under 95 %%: %d, '
          'truly under 95 %%: %d' % (len(low), sum(r[5] < 0.95 for r in low), len(miss),
                                    sum(r[5] < 0.95 for r in miss)))
    for v, dt, m, cfg, read, q in low:
        print('  v%d %s %-22s %-34s read %.3f true %.3f' % (v, dt, m, cfg, read, q))


if __name__ == '__main__':
    main(sys.argv)
