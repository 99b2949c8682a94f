import csv,collections,sys,glob
d=collections.defaultdict(dict)
for f in sorted(glob.glob(sys.argv[1]+'/var*-*.csv')):
    for row in csv.DictReader(open(f)):
      if row['accuracy']!='PASS': continue
      key=(row['benchmark'][:2],row['dtype'],row['M']+'x'+row['N'])
      d[key].setdefault(row['backend'],[]).append(float(row['gbps']))
for key,v in sorted(d.items()):
  base=v.get('tuned',[0]); b=min(base)
  best=sorted([(min(x),be,x) for be,x in v.items() if be!='tuned'],reverse=True)[:4]
  print(key,'entry',' / '.join('%.0f'%x for x in base), ' | '.join('%s %s %.3f'%(be[6:],'/'.join('%.0f'%y for y in x),m/b) for m,be,x in best))
