#!/usr/bin/env python3
"""Replays auto's race (spmvd_tuner.c: time_rounds, ahead) over the run
times that probe_rounds RACES RAW.tsv recorded, repetition by repetition,
with a round's estimator and the comparison of two candidates varied.

The truth of a configuration is the median over the repetitions of its
2 + 10 medians (of the race variant, where RAW.tsv has several: products
as the worker runs them); a '*' configuration (the exhaustive best, not
raced) counts only as the best.  Prints, per probe_rounds variant and
replay rule, best/pick over every replayed race (geometric mean, worst,
how many under 95 and 97 %), the cost in SpMV-equivalents of the pick,
and the regret against the best configuration of the shortlist itself.

    usage: race_replay.py RAW.tsv[.gz] [MAX_COST] [-v]
"""
import gzip
import math
import statistics as st
import sys
from collections import defaultdict

# spmvd_race_params_default, and auto's cost bound (SPMVD_AUTO_MAX_COST)
P = dict(reps=2, max_rounds=3, min_rounds=1, stable_tol=0.03, drop_ratio=1.5,
         probe_ratio=1.8, close_tol=0.05, max_cost=17.0)


def load(path):
    """data[variant][matrix][candidate][rep] = [p, r1a .. r3b, 2+10]; RAW
    files without a variant column hold the race variant only."""
    opener = gzip.open if path.endswith('.gz') else open
    data = defaultdict(lambda: defaultdict(lambda: defaultdict(dict)))
    order = defaultdict(list)
    with opener(path, 'rt') as f:
        has_variant = 'variant' in next(f).split('\t')
        for line in f:
            r = line.rstrip('\n').split('\t')
            if not has_variant:
                r.insert(2, 'race')
            m, c, v, rep = r[0], r[1], r[2], int(r[3])
            if v != 'turns' and c not in order[m]:
                order[m].append(c)
            data[v][m][c][rep] = [float(x) for x in r[4:]]
    return data, order


def estimate(a, b, mode):
    return (a + b) / 2 if mode == 'mean' else min(a, b)


def time_rounds(v, lead, lead_warm, runs_after, spent, mode):
    """One candidate: v = probe, three rounds of two, the 2 + 10 median."""
    p, rounds = v[0], [(v[1], v[2]), (v[3], v[4]), (v[5], v[6])]
    t = dict(rounds=0, status='ok')
    spent += p
    if lead > 0 and p > P['probe_ratio'] * lead + max(0, lead_warm - lead):
        t.update(status='dropped', time=p, first=p)
        return t, spent, p
    med = []
    for r in range(P['max_rounds']):
        a, b = rounds[r]
        m = estimate(a, b, mode)
        med.append(m)
        t['rounds'] = r + 1
        spent += a + b
        if r == 0:
            t['first'] = m
        t['best'] = m if r == 0 else min(t['best'], m)
        if lead > 0 and t['best'] > P['drop_ratio'] * lead:
            t['status'] = 'dropped'
            break
        cur = st.median(med)
        if r + 1 >= P['min_rounds'] and (
                lead <= 0 or abs(cur - lead) > P['close_tol'] * min(cur, lead)):
            break
        if r > 0 and abs(m - med[r - 1]) <= P['stable_tol'] * min(m, med[r - 1]):
            break
        unit = min(cur, lead) if lead > 0 else cur
        if spent + (P['reps'] + runs_after) * unit > P['max_cost'] * unit:
            break
    t['time'] = st.median(med)
    return t, spent, p


def ahead(a, b, rule):
    if rule == 'first' and (a['rounds'] == 1 or b['rounds'] == 1):
        return a['first'] < b['first']
    return a['time'] < b['time']


def race(data, order, m, rep, mode, rule):
    cands = [c for c in order[m] if not c.startswith('*')]
    trials, leader, lead_warm, spent = [], -1, 0, 0
    for k, c in enumerate(cands):
        lead = trials[leader]['time'] if leader >= 0 else 0
        t, spent, warm = time_rounds(data[m][c][rep], lead, lead_warm,
                                     (len(cands) - k - 1) * 3, spent, mode)
        t['cfg'] = c
        trials.append(t)
        if t['status'] == 'ok' and (leader < 0 or ahead(t, trials[leader], rule)):
            leader, lead_warm = k, warm
    return trials[leader]['cfg'], spent / trials[leader]['time']


def main():
    args = [a for a in sys.argv[1:] if a != '-v']
    verbose = '-v' in sys.argv
    if not args:
        sys.exit(__doc__)
    if len(args) > 1:
        P['max_cost'] = float(args[1])
    alldata, order = load(args[0])
    ref = alldata['race'] if 'race' in alldata else next(iter(alldata.values()))
    truth = {m: {c: st.median(v[7] for v in ref[m][c].values())
                 for c in order[m]} for m in order}
    rules = [('mean', 'first'), ('mean', 'plain'), ('min', 'first'),
             ('min', 'plain')]
    print('| variant | round, comparison | geomean % | worst % | races < 95 % '
          '| < 97 % | max cost | mean cost | regret vs the shortlist best: '
          'mean % | max % | races > 2 % off it |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for var, data in alldata.items():
        if var != 'turns':  # not a race's sequence (probe_rounds.c)
            replay(var, data, order, truth, rules, verbose)


def replay(var, data, order, truth, rules, verbose):
    """Prints one table row per rule for variant var's runs."""
    for mode, rule in rules:
        q, costs, reg, per_m = [], [], [], defaultdict(list)
        for m in order:
            best = min(truth[m].values())
            sbest = min(truth[m][c] for c in order[m] if not c.startswith('*'))
            reps = set.intersection(*(set(data[m][c]) for c in order[m]))
            for rep in sorted(reps):
                c, cost = race(data, order, m, rep, mode, rule)
                q.append(best / truth[m][c])
                per_m[m].append(q[-1])
                costs.append(cost)
                reg.append(truth[m][c] / sbest - 1)
        g = math.exp(sum(math.log(x) for x in q) / len(q))
        print(f'| {var} | {mode} of 2, {rule} | {100 * g:.2f} | {100 * min(q):.1f} '
              f'| {sum(x < .95 for x in q)} of {len(q)} | {sum(x < .97 for x in q)} '
              f'| {max(costs):.1f} | {st.mean(costs):.1f} | {100 * st.mean(reg):.2f} '
              f'| {100 * max(reg):.1f} | {sum(x > .02 for x in reg)} |')
        if verbose:
            for m in order:
                if min(per_m[m]) < 0.97:
                    print(f'| | {m} | min {100 * min(per_m[m]):.1f} | mean '
                          f'{100 * st.mean(per_m[m]):.1f} | < 95 %: '
                          f'{sum(x < .95 for x in per_m[m])} | | | | | | | |')


if __name__ == '__main__':
    main()
