import json,sys,re,subprocess
d=json.loads(subprocess.run(['build/kbench','--describe'],capture_output=True,text=True).stdout)
bk={}
for b in d['benchmarks']:
    for sn,s in b.get('sets',{}).items():
        for sh in s['shapes']:
            for dt,bu in sh.get('tune_bucket',{}).items(): bk[(b['name'],dt,sh['M'],sh['N'])]=bu
def load(p):
    c={}
    for l in open(p):
        q=l.rstrip('\n').split('|')
        if len(q)>=6 and not l.startswith('#'): c[(q[1],q[2],q[3])]=q[4]
    return c
old=load(sys.argv[1]); oldce=load(sys.argv[2]); new=load(sys.argv[3])
for l in open(sys.argv[4]):
    m=re.match(r're-recorded (\w+)\.tuned\.(\w+)\.(\d+)x(\d+): (.*)',l)
    if not m: continue
    b,dt,M,N,rest=m.group(1),m.group(2),int(m.group(3)),int(m.group(4)),m.group(5)
    bu=bk.get((b,dt,M,N)); k=(b,dt,bu)
    o=(oldce if (b=='cross_entropy_forward' and dt=='bf16') else old).get(k)
    print('CHANGED' if o!=new.get(k) else 'same   ', b,dt,f'{M}x{N}',bu,rest, '' if o==new.get(k) else f'[{o} -> {new.get(k)}]')
