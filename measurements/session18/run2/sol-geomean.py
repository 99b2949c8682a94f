import csv,glob,json,subprocess,math,sys,collections
d=json.loads(subprocess.run(['build/kbench','--describe'],capture_output=True,text=True).stdout)
sets={}
for b in d['benchmarks']:
    for sn in ('default','odd'):
        s=b.get('sets',{}).get(sn)
        if s: sets[(b['name'],sn)]=[(x['M'],x['N']) for x in s['shapes']]
res={}
for f in glob.glob(sys.argv[1]+'/*.tuned.bf16.*.csv'):
    for r in csv.DictReader(open(f)):
        if r['backend']=='tuned' and r['dtype']=='bf16' and r['sol_pct']: res[(r['benchmark'],int(r['M']),int(r['N']))]=float(r['sol_pct'])
for (b,sn),shapes in sorted(sets.items()):
    if sn!='default': continue
    v=[res[(b,M,N)] for M,N in shapes if (b,M,N) in res]
    if not v: continue
    g=math.exp(sum(math.log(x) for x in v)/len(v))
    low=[f"{M}x{N} ({res[(b,M,N)]:.1f})" for M,N in shapes if N>=1024 and (b,M,N) in res and res[(b,M,N)]<80]
    odd=[f"{M}x{N} ({res[(b,M,N)]:.1f})" for M,N in sets.get((b,'odd'),[]) if (b,M,N) in res and res[(b,M,N)]<80]
    print(f"{b}: geomean {g:.1f} over {len(v)} shapes; N>=1024 below 80%: {', '.join(low) or '-'}; odd N below 80%: {', '.join(odd) or '-'}")
