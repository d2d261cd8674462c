#!/usr/bin/env python3
# For each global load (LDG) inside a loop (between a backward branch and its
# target) of a `cuobjdump -sass` listing, the first later instruction (in
# address order) that waits on the load's scoreboard, and how many
# instructions apart: a load consumed a few instructions after it is issued
# was not loaded ahead (docs/kernels/cuda-linear.md, "Loads that
# waited"). The control bits of each instruction's second word: stall 41-44,
# yield 45, write barrier 46-48, read barrier 49-51, wait mask 52-57.
#   tools/sass_load_waits.py FILE.sass ...
import re, sys
def parse(path):
    lines = open(path).read().splitlines()
    ins = []
    i = 0
    while i < len(lines):
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*?);\s*/\* (0x[0-9a-f]+) \*/', lines[i])
        if m and i + 1 < len(lines):
            m2 = re.match(r'\s*/\* (0x[0-9a-f]+) \*/', lines[i + 1])
            if m2:
                hi = int(m2.group(1), 16)
                c = hi >> 41
                ins.append(dict(addr=int(m.group(1), 16), text=m.group(2).strip(), stall=c & 15,
                                wr=(c >> 5) & 7, rd=(c >> 8) & 7, wait=(c >> 11) & 0x3f))
                i += 2
                continue
        i += 1
    return ins
for path in sys.argv[1:]:
    ins = parse(path)
    name = re.search(r'Function : (\S+)', open(path).read())
    path = f"{path} ({name.group(1)})" if name else path
    # loops: the spans [target, branch] of the backward branches
    loops = []
    for x in ins:
        m = re.search(r'\bBRA (?:`\(\S+\) )?(0x[0-9a-f]+)', x['text'])
        if m and int(m.group(1), 16) <= x['addr']:
            loops.append((int(m.group(1), 16), x['addr']))
    near = []
    for k, x in enumerate(ins):
        if 'LDG' in x['text'] and x['wr'] != 7 and any(a <= x['addr'] <= b for a, b in loops):
            sb = x['wr']
            for j in range(k + 1, len(ins)):
                if ins[j]['wait'] >> sb & 1:
                    near.append((j - k, x['addr'], ins[j]['addr'], ins[j]['text'][:40]))
                    break
    short = [n for n in near if n[0] < 60]
    print(f"{path}: {len(near)} LDG in loops, {len(short)} consumed within 60 instructions")
    if not ins:
        print("   no instructions parsed: not a cuobjdump -sass listing?")
    for n in short[:12]:
        print(f"   +{n[0]:3d}  LDG @{n[1]:#06x} -> @{n[2]:#06x} {n[3]}")
