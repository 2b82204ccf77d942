# RealMem personas -> a LoCoMo-format file: a self-built user<->assistant set (reported, never
# counted). usage: python3 realmem-statements.py ../shared/data/realmem OUT.json
# Questions = the curated memory statements (their 【…】 heading dropped), evidence = their
# source turn (1-based in the files); empty turns are left out. Asked after the whole ingest.
import json,sys,glob,re,os
out=[]
for f in sorted(glob.glob(sys.argv[1]+'/*_dialogues_256k.json')):
    d=json.load(open(f)); conv={'speaker_a':'User','speaker_b':'Assistant'}; qa=[]; seen=set()
    for si,s in enumerate(d['dialogues'],1):
        dt=s['current_time'].split(' ')[0]
        import datetime as _d; _t=_d.date.fromisoformat(dt); conv[f'session_{si}_date_time']='10:00 am on %d %s, %d'%(_t.day,_t.strftime('%B'),_t.year)
        conv[f'session_{si}']=[{'speaker':t['speaker'],'dia_id':f'D{si}:{ti+1}','text':t['content']} for ti,t in enumerate(s['dialogue_turns']) if t['content'].strip()]
        for m in s.get('extracted_memory') or []:
            c=m['content']
            if not isinstance(c,str): continue
            if not c.startswith('【') or m['source_turn']<1: continue
            c=re.sub(r'^【[^】]*】\s*','',c)
            if c in seen: continue
            seen.add(c)
            qa.append({'question':c,'evidence':[f"D{si}:{m['source_turn']}"],'category':4,'answer':''})
    out.append({'sample_id':os.path.basename(f).split('_dialogues')[0],'conversation':conv,'qa':qa})
json.dump(out,open(sys.argv[2],'w'))
print(sum(len(x['qa']) for x in out),'questions')
