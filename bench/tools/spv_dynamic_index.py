#!/usr/bin/env python3
"""List OpAccessChain into Function/Private arrays whose index is not a (spec) constant.
usage: spv_dynamic_index.py MODULE.spv [--spec id=val ...] [--opt]   (--opt: freeze spec constants, spirv-opt -O, then check)"""
import subprocess, sys, re, tempfile, os
args = sys.argv[1:]
spv = args[0]
spec = [a.split('=', 1)[1] for a in args if a.startswith('--spec=')]
opt = '--opt' in args
if opt:
    tmp = tempfile.mktemp(suffix='.spv')
    cmd = ['spirv-opt', '--target-env=vulkan1.3']
    if spec:
        cmd += ['--set-spec-const-default-value=' + ' '.join(spec)]
    cmd += ['--freeze-spec-const', '--fold-spec-const-op-composite', '-O', '-O', spv, '-o', tmp]
    subprocess.run(cmd, check=True)
    spv = tmp
dis = subprocess.run(['spirv-dis', spv], check=True, capture_output=True, text=True).stdout
defs, order, func_of = {}, [], {}
cur_func = None
for line in dis.splitlines():
    line = line.split(';')[0].strip()
    if not line: continue
    m = re.match(r'(%\S+) = (Op\w+)\s*(.*)', line)
    if m:
        rid, op, rest = m.groups()
        defs[rid] = (op, rest.split())
        if op == 'OpFunction': cur_func = rid
        order.append((rid, op, rest.split(), cur_func))
    else:
        op = line.split()[0]
        order.append((None, op, line.split()[1:], cur_func))
CONST = {'OpConstant', 'OpSpecConstant', 'OpSpecConstantOp', 'OpConstantComposite', 'OpSpecConstantComposite',
         'OpConstantTrue', 'OpConstantFalse', 'OpSpecConstantTrue', 'OpSpecConstantFalse', 'OpConstantNull'}
# pointer types: %ptr = OpTypePointer Storage %pointee
def var_info(v):
    op, ops = defs.get(v, (None, []))
    if op != 'OpVariable': return None
    ptr = defs[ops[0]][1]
    sc, pointee = ptr[0], ptr[1]
    return sc, pointee
def is_array(t):
    return defs.get(t, (None,))[0] in ('OpTypeArray',)
def leaves(i, seen=None, depth=0):
    """the non-constant leaves an index expression depends on"""
    op, ops = defs.get(i, ('?', []))
    if op in CONST: return set()
    if op == 'OpLoad': return {'load ' + ops[1]}
    if op in ('OpPhi',): return {'phi ' + i}
    if op in ('OpFunctionParameter',): return {'param ' + i}
    if depth > 30: return {'deep ' + i}
    out = set()
    for o in ops[1:]:
        if o.startswith('%') and o in defs and defs[o][0] not in ('OpTypeInt', 'OpTypeFloat', 'OpTypeBool'):
            out |= leaves(o, seen, depth + 1)
    return out or {op + ' ' + i}
found = {}
for rid, op, ops, f in order:
    if op not in ('OpAccessChain', 'OpInBoundsAccessChain'): continue
    base = ops[1]
    vi = var_info(base)
    if not vi or vi[0] not in ('Function', 'Private') or not is_array(vi[1]): continue
    idx = ops[2]
    if defs.get(idx, ('?',))[0] in CONST: continue
    key = (base, vi[0])
    found.setdefault(key, set()).update(leaves(idx))
arrays = [(rid, ops) for rid, op, ops, f in order if op == 'OpVariable' and var_info(rid) and
          var_info(rid)[0] in ('Function', 'Private') and is_array(var_info(rid)[1])]
print(f'{len(arrays)} Function/Private array variables: ' + ' '.join(r for r, _ in arrays))
if not found: print('no dynamically indexed Function/Private arrays')
for (base, sc), lv in sorted(found.items()):
    print(f'dynamic: {base} ({sc}) index depends on: {" ".join(sorted(lv))}')
loops = [ops for rid, op, ops, f in order if op == 'OpLoopMerge']
print(f'loops left: {len(loops)} (' + ', '.join(o[2] for o in loops) + ')')
