# Writes the lists a LabKey-era MyStudies response server would hold after storing the given
# responses (rules of mobileAppStudy's ResponseManager.store/storeGroup), and exports them as
# LabKey's list archive (TSVWriter quoting) plus Participant and ResponseMetadata grid TSVs.
import json, sys, os, re, zipfile, datetime
SRC = sys.argv[1]; OUT = sys.argv[2]
MULTI = {'textchoice', 'grouped', 'fetalkickcounter', 'spatialspanmemory', 'towerofhanoi'}
TASK = {'fetalkickcounter': ['duration', 'count'], 'spatialspanmemory': ['score', 'numberOfGames', 'numberOfFailures'],
        'towerofhanoi': ['puzzleWasSolved', 'numberOfMoves']}
lists = {}   # name -> {'columns': [...], 'rows': [dict]}
meta = []
def ensure(name, columns):
    l = lists.setdefault(name, {'columns': ['Key'], 'rows': []})
    for c in columns:
        if c.lower() not in [x.lower() for x in l['columns']]: l['columns'].append(c)
    return l
def apply_design(name, parent, steps):
    cols = ([parent + 'Id'] if parent else [])
    for s in steps:
        if (s.get('type') or '').lower() == 'instruction': continue
        rt = s['resultType'].lower(); k = s['key']
        if rt == 'textchoice':
            c = [name + 'Id', k]
            if any((o.get('other') or {}).get('textfieldReq') for o in (s.get('format') or {}).get('textChoices', [])): c.append(k + '_Other_Text')
            ensure(name + k, c + ['ParticipantId'])
        elif rt == 'grouped': apply_design(name + k, name, s['steps'])
        elif rt in TASK: ensure(name + k, [name + 'Id'] + TASK[rt] + ['ParticipantId'])
        else: cols.append(k)
    ensure(name, cols + ['ParticipantId'])
def ts(text):  # a date answer or a time as the [R] server keeps it: local, offset dropped
    m = re.match(r'(\d{4}-\d\d-\d\d)(?:T(\d\d:\d\d:\d\d)(?:\.(\d+))?)?', text)
    frac = (m.group(3) or '0').rstrip('0') or '0'
    return '%s %s.%s' % (m.group(1), m.group(2) or '00:00:00', frac)
def jdouble(v):
    if isinstance(v, bool): raise ValueError
    r = repr(float(v)); return r
def cell(r):
    v = r.get('value'); rt = r['resultType'].lower()
    if r.get('skipped') or v is None: return ''
    if rt in ('scale', 'continuousscale', 'timeinterval', 'height', 'numeric'): return jdouble(v)
    if rt == 'date': return ts(v)
    if rt == 'boolean': return 'true' if v else 'false'
    return str(v)
def store(name, parent, parent_key, results, pid, top_key, created):
    l = lists[name]; key = len(l['rows']) + 1
    row = {'Key': str(key), 'ParticipantId': str(pid)}
    if parent: row[parent + 'Id'] = str(parent_key)
    top_key = top_key or key
    for r in results:
        rt = (r.get('resultType') or '').lower()
        if not rt or rt in MULTI: continue
        row[r['key']] = cell(r)
    l['rows'].append(row)
    for r in results:
        rt = (r.get('resultType') or '').lower()
        if rt and rt not in MULTI: md(name, top_key, r, pid, created)
    for r in results:
        rt = (r.get('resultType') or '').lower(); k = r['key']
        if rt not in MULTI: continue
        child = name + k
        if rt == 'textchoice':
            if not r.get('skipped'):
                for v in r.get('value') or []:
                    c = lists[child]; crow = {'Key': str(len(c['rows']) + 1), name + 'Id': str(key), 'ParticipantId': str(pid)}
                    if isinstance(v, dict):
                        crow[k] = v.get('other', ''); 
                        if (v.get('text') or '').strip(): crow[k + '_Other_Text'] = v['text']
                    else: crow[k] = jdouble(v) if isinstance(v, float) else str(v)
                    c['rows'].append(crow)
            md(name, top_key, r, pid, created)
        else:
            if r.get('skipped'): md(name, top_key, r, pid, created); continue
            v = r.get('value') or []
            groups = [v] if v and isinstance(v[0], dict) else v
            for g in groups: store(child, name, key, g, pid, top_key, created)
    return key
def md(name, top_key, r, pid, created):
    meta.append({'ListName': name, 'ActivityId': str(top_key), 'FieldName': r['key'],
                 'StartTime': ts(r['startTime']) if r.get('startTime') else '', 'EndTime': ts(r['endTime']) if r.get('endTime') else '',
                 'Skipped': 'true' if r.get('skipped') else 'false', 'ParticipantId': str(pid), 'Created': created})
def quote(v):
    if v == '' : return ''
    if re.search(r'[\r\n\t"]', v) or re.match(r'^\s', v) or re.search(r'\s$', v): return '"' + v.replace('"', '""') + '"'
    return v
def tsv(columns, rows):
    return ''.join('\t'.join(quote(r.get(c, '')) for c in columns) + '\n' for r in [dict(zip(columns, columns))] + rows)

plan = json.load(open(sys.argv[3]))
for a in plan['designs']:
    d = json.load(open(os.path.join(SRC, a)))['activity']; apply_design(d['metadata']['activityId'], '', d['steps'])
for r in plan['responses']:
    data = json.load(open(os.path.join(SRC, r['file'])))
    store(r['list'], '', None, data['results'], r['participant'], None, r['created'])
os.makedirs(OUT, exist_ok=True)
with zipfile.ZipFile(os.path.join(OUT, 'DYNAMICSCHEMASTUDY.lists.zip'), 'w', zipfile.ZIP_DEFLATED) as z:
    for name, l in lists.items(): z.writestr(name + '.tsv', tsv(l['columns'], l['rows']))
    for name, text in plan.get('extraLists', {}).items(): z.writestr(name + '.tsv', text)
cap = {'RowId': 'Row Id', 'ListName': 'List Name', 'ActivityId': 'Activity Id', 'FieldName': 'Field Name', 'StartTime': 'Start Time',
       'EndTime': 'End Time', 'Skipped': 'Skipped', 'ParticipantId': 'Participant Id', 'Created': 'Created'}
for i, m in enumerate(meta): m['RowId'] = str(i + 1)
cols = ['RowId', 'ListName', 'ActivityId', 'FieldName', 'StartTime', 'EndTime', 'Skipped', 'ParticipantId', 'Created']
open(os.path.join(OUT, 'ResponseMetadata.tsv'), 'w').write('\t'.join(cap[c] for c in cols) + '\n' + ''.join('\t'.join(quote(m[c]) for c in cols) + '\n' for m in meta))
pc = ['RowId', 'AppToken', 'StudyId', 'Status', 'AllowDataSharing', 'Created']
pcap = ['Row Id', 'App Token', 'Study Id', 'Status', 'Allow Data Sharing', 'Created']
open(os.path.join(OUT, 'Participant.tsv'), 'w').write('\t'.join(pcap) + '\n' + ''.join('\t'.join(quote(p.get(c, '')) for c in pc) + '\n' for p in plan['participants']))
