#!/usr/bin/env python3
# Per-tag TFLOP/s table of a vk.csv (device_lib.sh's `vk TAG ...` runs): one row per (head dim, seqlen, causal),
# one column per tag, every repetition of a tag shown (a/b). Usage: bench/tools/vk_ab.py vk.csv
import csv,sys,collections,statistics as st
rows=collections.defaultdict(lambda: collections.defaultdict(list)); tag=None; tags=[]
for l in open(sys.argv[1]):
    if l.startswith('# '):
        tag=l[2:].strip()
        if tag not in tags: tags.append(tag)
        continue
    r=next(csv.reader([l]))
    if not r or r[0]=='device': continue
    key=(int(r[10]),int(r[7]),int(r[11]))
    rows[tag][key].append(float(r[14]))
keys=sorted({k for t in rows for k in rows[t]})
print('| d | S | causal | '+' | '.join(tags)+' |')
for k in keys:
    base=None; cells=[]
    for t in tags:
        v=rows[t].get(k)
        cells.append('/'.join('%.1f'%x for x in v) if v else '-')
    print('| %d | %d | %d | '%k+' | '.join(cells)+' |')
