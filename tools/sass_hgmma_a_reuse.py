#!/usr/bin/env python3
# Writes to a register that an HGMMA with A from registers may still read: in
# each loop (a backward branch and its target) of a `cuobjdump -sass` listing
# (tools/sass_here.sh), walked twice so that the groups left in flight at the
# back-edge count, each instruction whose destination lies in the A quad of
# an HGMMA not yet retired by a `WARPGROUP.DEPBAR.LE gsb0, n` (n: the groups
# it leaves in flight). Whether the hardware reads those registers until the
# product completes is what docs/kernels/cuda-linear.md, "The weights from
# registers", leaves open; this lists where ptxas assumed it does not.
#   tools/sass_hgmma_a_reuse.py FILE.sass ...
import re, sys

SKIP = ('WARPGROUP', 'ST', 'BRA', 'SYNCS', 'BAR', 'BSSY', 'BSYNC', 'NOP', 'R2UR', 'WARPSYNC', 'ISETP', 'PLOP3', 'RED', 'ATOM')

def parse(path):
    ins = []
    for line in open(path).read().splitlines():
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);', line)
        if m:
            ins.append((int(m.group(1), 16), m.group(2).strip()))
    return ins

def loops(ins):
    for a, t in ins:
        m = re.search(r'BRA (?:\S+, )?0x([0-9a-f]+)', t)
        if m and int(m.group(1), 16) < a:
            yield int(m.group(1), 16), a

for path in sys.argv[1:]:
    ins = parse(path)
    found = 0
    for lo, hi in sorted(set(loops(ins))):
        body = [(a, t) for a, t in ins if lo <= a <= hi]
        if not any('HGMMA' in t and re.search(r'F32 R\d+, R\d+,', t) for _, t in body):
            continue
        pending = []
        for rnd in range(2):
            for a, t in body:
                if 'HGMMA' in t:
                    m = re.search(r'F32 R\d+, R(\d+),', t)
                    if m:
                        pending.append((a, int(m.group(1))))
                    continue
                m = re.search(r'DEPBAR\.LE gsb0, 0x([0-9a-f]+)', t)
                if m:
                    n = int(m.group(1), 16)
                    pending = pending[max(0, len(pending) - n):]
                    continue
                op = t.split()
                if op and op[0].startswith('@'):
                    op = op[1:]
                if rnd == 0 or len(op) < 2 or op[0].startswith(SKIP):
                    continue
                d = re.match(r'R(\d+)', op[1])
                if not d:
                    continue
                r = int(d.group(1))
                for pa, base in pending:
                    if base <= r < base + 4:
                        found += 1
                        print(f'{path}: {a:04x} writes R{r} while the HGMMA at {pa:04x} (A R{base}..R{base + 3}) may be in flight: {t}')
    print(f'{path}: {found} writes to the A registers of HGMMAs that may be in flight')
