"""The pip torch wheel runs on Braid's libnccl.so.2 in place of NVIDIA's.

1. Every nccl* symbol that a torch/lib/*.so of the installed wheel needs
   (nm -D --undefined-only) is exported by Braid's library; each missing one is named.
2. In a private overlay of the venv's site-packages (under a temporary directory: the
   shared venv is never touched, and a killed test leaves nothing behind), the wheel's
   nvidia/nccl/lib/libnccl.so.2 is Braid's library: torch finds it through the same DT_RPATH
   ($ORIGIN/../../nvidia/nccl/lib) and its own preloading, and NVIDIA's is not there to bind
   anything to. With LD_BIND_NOW=1 (every symbol bound at load, so a missing one fails the
   import), `import torch`, `torch.cuda.nccl.unique_id()` and
   `torch.distributed.is_nccl_available()` must work, and /proc/self/maps must show Braid's
   libnccl.so.2 mapped and NVIDIA's not.

The overlay: symbolic links to every entry of site-packages except torch/ and nvidia/;
torch/ holds links too, but its shared objects are hard links (copies across file
systems), so that $ORIGIN is the overlay's directory; nvidia/nccl/lib/libnccl.so.2 links
to Braid's library.

    test_wheel_dropin.py BRAID_LIBNCCL
"""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

CHILD = r'''
import json, os, sys
sys.path.insert(0, sys.argv[1])
result = {}
try:
    import torch
    import torch.distributed as dist
    result["torch"] = torch.__version__
    result["unique_id_bytes"] = len(torch.cuda.nccl.unique_id())
    result["is_nccl_available"] = bool(dist.is_nccl_available())
except Exception as e:  # reported, not raised: the parent names what failed
    result["error"] = f"{type(e).__name__}: {e}"
result["mapped"] = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libnccl" in line})
print("RESULT " + json.dumps(result))
'''


def nccl_symbols(path, defined):
    flag = "--defined-only" if defined else "--undefined-only"
    out = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True, check=True).stdout
    return {line.split()[-1].split("@")[0] for line in out.splitlines() if line.split()[-1].startswith("nccl")}


def link_or_copy(src, dst):
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def mirror(src_dir, dst_dir, special):
    """dst_dir gets a symbolic link to each entry of src_dir, except those in `special`
    (name -> function(src, dst) that makes that entry)."""
    os.makedirs(dst_dir)
    for name in os.listdir(src_dir):
        src, dst = os.path.join(src_dir, name), os.path.join(dst_dir, name)
        if name in special:
            special[name](src, dst)
        elif name.endswith(".so") and os.path.isfile(src) and not os.path.islink(src):
            link_or_copy(src, dst)  # an extension module: its $ORIGIN must be the overlay's
        else:
            os.symlink(src, dst)


def build_overlay(site, root, braid_lib):
    def torch_lib(src, dst):
        os.makedirs(dst)
        for name in os.listdir(src):
            s = os.path.join(src, name)
            if os.path.isfile(s):
                link_or_copy(s, os.path.join(dst, name))
            else:
                os.symlink(s, os.path.join(dst, name))

    def nccl(src, dst):
        os.makedirs(os.path.join(dst, "lib"))
        os.symlink(braid_lib, os.path.join(dst, "lib", "libnccl.so.2"))

    overlay = os.path.join(root, "site-packages")
    os.makedirs(overlay)
    for name in os.listdir(site):
        src, dst = os.path.join(site, name), os.path.join(overlay, name)
        if name == "torch":
            mirror(src, dst, {"lib": torch_lib})
        elif name == "nvidia":
            mirror(src, dst, {"nccl": nccl})
        else:
            os.symlink(src, dst)
    return overlay


def main():
    braid_lib = os.path.realpath(sys.argv[1])
    spec = importlib.util.find_spec("torch")
    if spec is None:
        print("SKIP: torch is not importable")
        return SKIP
    torch_dir = spec.submodule_search_locations[0]
    site = os.path.dirname(torch_dir)
    wheel_nccl = os.path.join(site, "nvidia", "nccl", "lib", "libnccl.so.2")
    if not os.path.exists(wheel_nccl):
        print(f"SKIP: this torch has no nvidia-nccl wheel ({wheel_nccl})")
        return SKIP
    with open(os.path.join(torch_dir, "version.py")) as f:
        version = next((line.split("=")[1].strip().strip("'\"") for line in f if line.startswith("__version__")), "?")

    failures = []
    exported = nccl_symbols(braid_lib, defined=True)
    needed = {}
    lib_dir = os.path.join(torch_dir, "lib")
    for name in sorted(os.listdir(lib_dir)):
        if ".so" in name and os.path.isfile(os.path.join(lib_dir, name)):
            for sym in nccl_symbols(os.path.join(lib_dir, name), defined=False):
                needed.setdefault(sym, []).append(name)
    missing = sorted(set(needed) - exported)
    print(f"torch {version}: {len(needed)} nccl symbols needed by torch/lib/*.so; "
          f"Braid's {braid_lib} exports {len(exported)} nccl symbols")
    for sym in missing:
        failures.append(f"Braid lacks {sym} (needed by {', '.join(needed[sym])})")

    with tempfile.TemporaryDirectory(prefix="braid-dropin-") as root:
        start = time.monotonic()
        overlay = build_overlay(site, root, braid_lib)
        took = time.monotonic() - start
        size = sum(os.lstat(os.path.join(d, f)).st_blocks * 512 for d, _, fs in os.walk(root) for f in fs
                   if not os.path.islink(os.path.join(d, f)) and os.lstat(os.path.join(d, f)).st_nlink == 1)
        print(f"overlay made in {took * 1000:.0f} ms, {size // 1024} KiB of new data (hard links cost none)")
        env = dict(os.environ, LD_BIND_NOW="1")
        env.pop("PYTHONPATH", None)
        env.pop("LD_LIBRARY_PATH", None)
        env.pop("LD_PRELOAD", None)
        p = subprocess.run([sys.executable, "-S", "-c", CHILD, overlay], env=env, capture_output=True, text=True,
                           timeout=240, cwd=root)
        line = next((x for x in p.stdout.splitlines() if x.startswith("RESULT ")), None)
        if line is None:
            failures.append(f"the child printed no result (exit {p.returncode}):\n{p.stdout}\n{p.stderr[-3000:]}")
        else:
            result = json.loads(line[len("RESULT "):])
            print(f"with Braid as the wheel's libnccl.so.2: {result}")
            if "error" in result:
                failures.append(f"import torch / torch.cuda.nccl.unique_id() failed: {result['error']}")
            else:
                if result.get("unique_id_bytes") != 128:
                    failures.append(f"torch.cuda.nccl.unique_id() gave {result.get('unique_id_bytes')} bytes, not 128")
                if not result.get("is_nccl_available"):
                    failures.append("torch.distributed.is_nccl_available() is False")
            mapped = [os.path.realpath(m) for m in result["mapped"]]
            if braid_lib not in mapped:
                failures.append(f"Braid's library is not mapped (mapped: {result['mapped']})")
            nvidia = [m for m in mapped if os.path.samefile(m, wheel_nccl)]
            if nvidia:
                failures.append(f"NVIDIA's libnccl.so.2 is mapped: {nvidia}")
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print(f"PASS: torch {version} runs on Braid's libnccl.so.2 ({len(needed)} symbols)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
