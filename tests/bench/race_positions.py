#!/usr/bin/env python3
"""How far auto's race timed the exhaustive best when it raced it, by the
best's position in the race and the runs it got, over evaluation tables
(eval_tuner --tsv): its race median over the exhaustive race's best
(raced_best_us, 2 + 10 runs, before confirm()), for products under 20 us
and from 20 us on.  A trial the race looked at twice counts its first
round in its position and its second look in that position's 'look' row
(eval-h100-v62, the only tables with looks: the rule was reverted).

    usage: race_positions.py EVAL.tsv...
"""
import sys
from collections import defaultdict


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    groups = defaultdict(list)
    for path in sys.argv[1:]:
        for line in open(path):
            if line.startswith('#'):
                continue
            r = line.rstrip('\n').split('\t')
            race = [x for x in r if x.startswith('auto_race:')]
            rb = [x for x in r if x.startswith('raced_best_us:')]
            if not race or not rb:
                continue
            best_us = float(rb[0].split(':', 1)[1])
            if best_us <= 0:
                continue
            for k, t in enumerate(race[0][len('auto_race:'):].split(';')):
                cfg, rest = t.rsplit('=', 1)
                f = rest.split()
                if cfg != r[6] or f[1] != 'ok':
                    continue
                pos = 'first' if k == 0 else 'later'
                if 'looked' in f:
                    # Its time is the second look's (3 more runs); its
                    # first round is listed after 'first'.
                    first = float(f[f.index('first') + 1])
                    groups[(best_us < 20, pos, int(f[2]) - 3)].append(first / best_us)
                    groups[(best_us < 20, pos + ' look', 3)].append(float(f[0]) / best_us)
                else:
                    groups[(best_us < 20, pos, int(f[2]))].append(float(f[0]) / best_us)
    print('| product | position | runs | races | median | p75 | p90 | p95 |')
    print('|---|---|---|---|---|---|---|---|')
    for key in sorted(groups, key=lambda k: (not k[0], k[1], k[2])):
        v = sorted(groups[key])
        q = lambda p: v[min(len(v) - 1, int(p * len(v)))]
        print(f'| {"< 20 us" if key[0] else ">= 20 us"} | {key[1]} | {key[2]} | {len(v)} '
              f'| {q(.5):.3f} | {q(.75):.3f} | {q(.9):.3f} | {q(.95):.3f} |')


if __name__ == '__main__':
    main()
