import json
opts=[f"Option {o}" for o in range(12)]
qs=[{"type":"ranked","label":f"Rank these {q}","options":opts} for q in range(20)]
print(json.dumps({"title":"Heavy poll","lang":"en","expiryDays":7,"resultsPublic":True,"duplicateCheck":"none","questions":qs}))
