#!/usr/bin/env python3
"""Each library's time over FA2's, per cell and as a geomean, from a peers log whose runs are headed
'######## NAME' (a round after it or not) (the run scripts here): python3 table.py peers_ab2.log CDM"""
import re,collections,sys,math,statistics as st
libs=sys.argv[2]
cur=None; data=collections.defaultdict(lambda: collections.defaultdict(list))
for line in open(sys.argv[1]):
    m=re.match(r'######## (\w)\b',line)
    if m: cur=m.group(1); continue
    f=line.split()
    if len(f)>10 and f[0] in('fa2','flashtile:cuda_sm80'):
        key=(int(f[2]),f[3],int(f[6])); ms=float(f[9])
        data[key][('fa2' if f[0]=='fa2' else cur)].append(ms)
print("d causal S | fa2 ms | " + " ".join(v+"/fa2" for v in libs))
g=collections.defaultdict(list)
for k in sorted(data):
    fa=st.mean(data[k]['fa2']); row=[]
    for v in libs:
        r=fa/st.mean(data[k][v]); row.append(r); g[v].append(r)
    print(k, "%.3f"%fa, " ".join("%.3f"%x for x in row))
for v in libs: print(v, "geomean %.3f"%math.exp(sum(map(math.log,g[v]))/len(g[v])))
