#!/usr/bin/env python3
"""Raw glslang module: every OpAccessChain into a Function/Private array whose index is not an OpConstant/
OpSpecConstant(Op), traced back to the variables it depends on. OK when each is the counter of an Unroll loop that
starts at a constant, steps by +constant and is bounded by `< (spec) constant`; anything else is listed."""
import subprocess, sys, re
dis = subprocess.run(['spirv-dis', sys.argv[1]], check=True, capture_output=True, text=True).stdout
defs, insts = {}, []
label = None
for line in dis.splitlines():
    line = line.split(';')[0].strip()
    if not line: continue
    m = re.match(r'(%\S+) = (Op\w+)\s*(.*)', line)
    rid, op, ops = (m.group(1), m.group(2), m.group(3).split()) if m else (None, line.split()[0], line.split()[1:])
    if op == 'OpLabel': label = rid
    if rid: defs[rid] = (op, ops)
    insts.append((rid, op, ops, label))
CONST = {'OpConstant', 'OpSpecConstant', 'OpSpecConstantOp', 'OpConstantComposite', 'OpSpecConstantComposite',
         'OpConstantTrue', 'OpConstantFalse', 'OpSpecConstantTrue', 'OpSpecConstantFalse', 'OpConstantNull'}
isconst = lambda i: defs.get(i, ('?',))[0] in CONST
def var_sc(v):
    op, ops = defs.get(v, (None, []))
    return defs[ops[0]][1][0] if op == 'OpVariable' else None
def var_pointee(v): return defs[defs[v][1][0]][1][1]
stores = {}
for rid, op, ops, lab in insts:
    if op == 'OpStore': stores.setdefault(ops[0], []).append((ops[1], lab))
loops = [(lab, ops[0], ops[1], ops[2]) for rid, op, ops, lab in insts if op == 'OpLoopMerge']
def loaded_var(i):
    op, ops = defs.get(i, ('?', []))
    return ops[1] if op == 'OpLoad' else None
counters = {}  # var -> (control, canonical)
for hdr, merge, cont, ctl in loops:
    for var, sts in stores.items():
        for val, lab in sts:
            if lab != cont: continue
            op, ops = defs.get(val, ('?', []))
            step = op == 'OpIAdd' and loaded_var(ops[1]) == var and isconst(ops[2])
            init = [v for v, l in sts if l != cont]
            bounded = any(o in ('OpULessThan', 'OpSLessThan') and loaded_var(a[1]) == var and isconst(a[2])
                          for o, a in defs.values())
            counters[var] = (ctl, step and len(init) == 1 and isconst(init[0]) and bounded)
def leaves(i, depth=0):
    op, ops = defs.get(i, ('?', []))
    if op in CONST: return set()
    if op == 'OpLoad':
        v = ops[1]
        if v in counters: return {v}
        sts = stores.get(v, [])
        if var_sc(v) == 'Function' and len(sts) == 1: return leaves(sts[0][0], depth + 1)
        return {'NOT-A-COUNTER:' + v}
    if depth > 40 or op in ('OpFunctionParameter', 'OpPhi', 'OpFunctionCall'): return {'NOT-A-COUNTER:' + i}
    out = set()
    for o in ops[1:]:
        if o in defs and not defs[o][0].startswith('OpType'): out |= leaves(o, depth + 1)
    return out
ok, bad = 0, []
for rid, op, ops, lab in insts:
    if op not in ('OpAccessChain', 'OpInBoundsAccessChain'): continue
    base = ops[1]
    if var_sc(base) not in ('Function', 'Private') or defs[var_pointee(base)][0] != 'OpTypeArray': continue
    if isconst(ops[2]): continue
    lv = leaves(ops[2])
    good = all(not l.startswith('NOT') and counters[l][0] == 'Unroll' and counters[l][1] for l in lv)
    if good: ok += 1
    else: bad.append(f'{base}[{ops[2]}] <- ' + ' '.join(f'{l}{counters.get(l, "")}' for l in sorted(lv)))
print(f'{sys.argv[1]}: {ok} non-constant array indices, all through counters of canonical Unroll loops; '
      f'{len(bad)} others')
for b in bad: print('  ' + b)
# Every Unroll loop: a canonical counter, and one way into its continue block and out of it (no continue / break):
# a loop left rolled keeps the loops around it rolled too.
preds = {}
for rid, op, ops, lab in insts:
    if op == 'OpBranch': preds.setdefault(ops[0], []).append(lab)
    if op == 'OpBranchConditional':
        for t in ops[1:3]: preds.setdefault(t, []).append(lab)
    if op == 'OpSwitch':
        for t in ops[1::2]: preds.setdefault(t, []).append(lab)
cont_of = {cont: var for var, (ctl, ok_) in counters.items() for hdr, merge, cont, c2 in loops
           if any(l == cont for v, l in stores[var])}
nloop, badloops = 0, []
for hdr, merge, cont, ctl in loops:
    if ctl != 'Unroll': continue
    nloop += 1
    var = cont_of.get(cont)
    why = []
    if not var or not counters[var][1]: why.append(f'counter {var} not canonical')
    if len(set(preds.get(cont, []))) > 1: why.append('continue statement')
    if len(set(preds.get(merge, []))) > 1: why.append('break / second exit')
    if why: badloops.append(f'loop {hdr}: ' + ', '.join(why))
print(f'  {nloop} Unroll loops, {len(badloops)} not canonical:')
for b in badloops: print('    ' + b)
