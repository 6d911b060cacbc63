"""Writes mm_run/: the staging of an mm run, as tests/data/ir/README.md describes.

Re-run after changing it: python3 tests/data/ir/make_mm_run.py (deterministic output)."""
import json, hashlib
from pathlib import Path
root = Path(__file__).resolve().parent / "mm_run"
root.mkdir(parents=True, exist_ok=True)
def H(s): return hashlib.sha256(s.encode()).hexdigest()
sig = {"A":"*fp16","B":"*fp16","C":"*fp16","M":"i32","N":"i32","K":"i32","stride_am":"i32","stride_bk":"i32"}
def cx(m,n,k,g,even): return {"BLOCK_SIZE_M":m,"BLOCK_SIZE_N":n,"BLOCK_SIZE_K":k,"GROUP_SIZE_M":g,"EVEN_K":even}
V = {
 "h1": ("mm_kernel", cx(128,128,32,8,True), 8,3, ["A","B","C","M","N","K"], "tune"),
 "h2": ("mm_kernel", cx(64,64,32,8,True), 4,4, ["A","B","C","M","N","K"], "tune"),
 "h3": ("mm_kernel", cx(64,64,32,8,True), 4,4, ["A","B","C","M","N","K"], "tune"),
 "h4": ("mm_kernel", cx(16,64,32,8,False), 4,3, ["A","B","C","N","K"], "tune"),
 "h5": ("mm_kernel", cx(16,128,32,8,True), 4,3, ["A","B","C","N","K"], "tune"),
 "h6": ("copy_kernel", {"BLOCK":1024}, 4,3, ["src","dst"], "eager"),
 "h7": ("mm_kernel", cx(128,128,64,8,True), 8,3, ["A","B","C","M","N","K"], "tune"),
 "h8": ("mm_kernel", cx(32,32,32,8,True), 2,2, ["A","B","C","M","N","K"], "tune"),
 "h9": ("mm_kernel", cx(256,128,64,8,True), 8,4, ["A","B","C","M","N","K"], "tune"),
 "h10": ("mm_kernel", cx(64,64,32,8,True), 4,4, ["A","B","C","N","K"], "tune"),
 "h11": ("copy_kernel", {"BLOCK":1024}, 4,3, ["src","dst"], "eager"),
}
hashes = {k: H("mm-fixture-"+k) for k in V}
comp = []
for k,(kern,c,w,s,div16,during) in V.items():
    comp.append({"schema_version":1,"ts":1764400000.0+len(comp),"hash":hashes[k],"kernel":kern,"name":kern,
        "num_warps":w,"num_stages":s,"num_ctas":1,"constexprs":c,
        "signature":sig if kern=="mm_kernel" else {"src":"*fp32","dst":"*fp32"},
        "specialization":{"div16":div16,"equal1":[]},"cache_hit":False,
        "stages":{st:f"/home/u/.triton/cache/{hashes[k]}/{kern}.{st}" for st in ["ttir","ttgir","llir","ptx","cubin"]},
        "nodeid":"benchmark/test_blas_perf.py::test_mm","during":during})
# a duplicate compile line (cache hit) for h2: the first is kept
dup = dict(comp[1]); dup["cache_hit"] = True; dup["num_warps"] = 99
comp.append(dup)
staged = []
launched = ["h1","h2","h3","h4","h5","h6","h7","h10","h11"]
for k in launched:
    kern = V[k][0]
    d = root/"ir/files"/hashes[k]; d.mkdir(parents=True, exist_ok=True)
    files = {}
    for st in ["ttir","ttgir","llir","ptx","cubin"]:
        p = d/f"{kern}.{st}"
        if st == "cubin":
            p.write_bytes(b"\x7fELF\x00\x01" + hashes[k].encode() + b"\x00")
        else:
            p.write_text(f"// {st} of {kern} {k}\n#blocked = {json.dumps(V[k][1], sort_keys=True)}\nmodule {{ num_warps = {V[k][2]} }}\n")
        files[st] = f"files/{hashes[k]}/{kern}.{st}"
    staged.append({"hash":hashes[k],"files":files})
def L(*pairs): return [{"hash":hashes[k],"kernel":V[k][0],"count":n} for k,n in pairs]
rows = []
def row(idx, dtype, detail, launches):
    rows.append({"schema_version":1,"kind":"row","nodeid":"benchmark/test_blas_perf.py::test_mm","op":"mm","op_name":"mm",
        "dtype":dtype,"mode":"kernel","level":"core","index":idx,"status":"SUCCESS","error":None,
        "shape_detail":detail,"latency_base_ms":0.01,"latency_ms":0.01,"speedup":1.0,
        "torch":{"timer":"graph","median_ms":0.01,"launches":[]},
        "gems":{"timer":"graph","median_ms":0.01,"launches":launches}})
row(0,"torch.float16","[torch.Size([1024, 1024]), torch.Size([1024, 1024])]", L(("h2",1),("h10",1)))
row(1,"torch.float16","[torch.Size([4096, 4096]), torch.Size([4096, 4096])]", L(("h1",1),("h7",2)))
row(2,"torch.float16","[torch.Size([1, 4096]), torch.Size([4096, 1024])]", L(("h4",1)))
row(3,"torch.float16","[torch.Size([1, 4096]), torch.Size([4096, 4096])]", L(("h6",1),("h5",1),("h11",1)))
row(6,"torch.bfloat16","[torch.Size([1, 4096]), torch.Size([4096, 4096])]", L(("h4",2)))
row(4,"torch.bfloat16","[torch.Size([1024, 1024]), torch.Size([1024, 1024])]", L(("h3",1)))
row(5,"torch.bfloat16","[torch.Size([1024, 1024]), torch.Size([1024, 1024])]", L(("h3",3)))
(root/"ir").mkdir(exist_ok=True)
(root/"ir/compiles.jsonl").write_text("".join(json.dumps(c)+"\n" for c in comp) + '{"hash": "cut-short\n')
(root/"ir/staged.jsonl").write_text("".join(json.dumps(c)+"\n" for c in staged))
(root/"results.jsonl").write_text("".join(json.dumps(c)+"\n" for c in rows))
(root/"run_identity.json").write_text(json.dumps({"schema_version":1,"status":"completed","op":"mm","caliber":{},"provenance":{},"outcome":{}}, indent=2)+"\n")
for k in sorted(hashes): print(k, hashes[k])
