"""Every operation of the "braid" backend against gloo's result on the same inputs.

Where gloo does not implement an operation or dtype (bfloat16, bool, complex,
reduce_scatter, all_to_all with lists, AVG), the reference is computed locally from every
rank's inputs, which each rank can regenerate.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import group_cases  # noqa: E402
import harness  # noqa: E402

COUNTS = [1, 7, 1000, 65537]


def _input(torch, rank, dtype, count, op="sum", salt=0):
    g = torch.Generator().manual_seed(1000 * rank + 17 * count + salt)
    if dtype == torch.bool:
        return torch.randint(0, 2, (count,), generator=g).bool()
    if dtype.is_complex:  # multiples of 1/8: sums are exact whatever the order
        real = torch.float32 if dtype == torch.complex64 else torch.float64
        parts = (torch.randint(-64, 64, (2, count), generator=g).to(real) / 8)
        return torch.complex(parts[0], parts[1])
    if op == "product":  # small factors: no overflow, exact in every type
        return torch.randint(1, 3, (count,), generator=g).to(dtype)
    if dtype.is_floating_point:
        # Multiples of 1/8 in a small range: sums are exact in every float type.
        return (torch.randint(-64, 64, (count,), generator=g).to(torch.float64) / 8).to(dtype)
    if dtype == torch.uint8:
        return torch.randint(0, 40, (count,), generator=g).to(dtype)
    return torch.randint(-40, 40, (count,), generator=g).to(dtype)


def _local_reduce(torch, tensors, op):
    acc = tensors[0].clone()
    for t in tensors[1:]:
        if op == "sum":
            acc = acc + t if acc.dtype != torch.bool else acc | t
        elif op == "product":
            acc = acc * t if acc.dtype != torch.bool else acc & t
        elif op == "min":
            acc = torch.minimum(acc, t)
        elif op == "max":
            acc = torch.maximum(acc, t)
    return acc


def worker(ctx):
    import torch
    import torch.distributed as dist
    from torch.distributed import ReduceOp

    braid, n, me = ctx.braid, ctx.world, ctx.rank
    failures = []
    ops = {"sum": ReduceOp.SUM, "product": ReduceOp.PRODUCT, "min": ReduceOp.MIN, "max": ReduceOp.MAX}
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.int8,
              torch.uint8, torch.bool, torch.complex64]

    def expect_equal(name, got, want):
        if got.dtype != want.dtype or got.shape != want.shape:
            failures.append(f"{name}: got {got.dtype}{tuple(got.shape)}, want {want.dtype}{tuple(want.shape)}")
        elif not torch.equal(got, want):
            bad = (got != want).nonzero()
            failures.append(f"{name}: {len(bad)} elements differ, first at {bad[0].tolist()}: "
                            f"{got.flatten()[bad[0][0]].item()} vs {want.flatten()[bad[0][0]].item()}")

    def gloo_or_local(fn, local):
        try:
            return fn(), "gloo"
        except RuntimeError:
            return local(), "local"

    # allreduce: every type x op x count, compared with gloo where gloo has the type.
    sources = set()
    for dtype in dtypes:
        for opname, op in ops.items():
            if dtype.is_complex and opname != "sum":
                continue
            for count in COUNTS:
                x = _input(torch, me, dtype, count, opname)
                mine = x.clone()
                dist.all_reduce(mine, op=op, group=braid)

                def gloo():
                    y = x.clone()
                    dist.all_reduce(y, op=op)
                    return y

                want, src = gloo_or_local(gloo, lambda: _local_reduce(
                    torch, [_input(torch, r, dtype, count, opname) for r in range(n)], opname))
                sources.add((str(dtype), src))
                expect_equal(f"allreduce {dtype} {opname} n={count}", mine, want)
    # AVG: gloo has none; SUM / n on exact inputs, within the type's rounding.
    for dtype, tol in [(torch.float32, 1e-6), (torch.float64, 1e-12), (torch.float16, 2e-3), (torch.bfloat16, 1.6e-2)]:
        x = _input(torch, me, dtype, 1000)
        mine = x.clone()
        dist.all_reduce(mine, op=ReduceOp.AVG, group=braid)
        want = _local_reduce(torch, [_input(torch, r, dtype, 1000).double() for r in range(n)], "sum") / n
        err = ((mine.double() - want).abs() / want.abs().clamp(min=1)).max().item()
        if err > tol:
            failures.append(f"allreduce {dtype} AVG differs from SUM/{n} by {err} (relative)")

    # broadcast from every root; any dtype moves as bytes.
    for dtype in [torch.float32, torch.int16, torch.complex128, torch.bool, torch.bfloat16]:
        for root in range(n):
            x = _input(torch, me, dtype, 1001)
            mine, ref = x.clone(), x.clone()
            dist.broadcast(mine, src=root, group=braid)
            try:
                dist.broadcast(ref, src=root)
            except RuntimeError:
                ref = _input(torch, root, dtype, 1001)
            expect_equal(f"broadcast {dtype} root={root}", mine, ref)

    # reduce to every root: the root's result.
    for root in range(n):
        x = _input(torch, me, torch.float32, 5000)
        mine, ref = x.clone(), x.clone()
        dist.reduce(mine, dst=root, group=braid)
        dist.reduce(ref, dst=root)
        if me == root:
            expect_equal(f"reduce root={root}", mine, ref)

    # allgather (list and into one tensor), gloo as reference.
    for dtype in [torch.float32, torch.int64, torch.float16]:
        x = _input(torch, me, dtype, 333)
        mine = [torch.empty_like(x) for _ in range(n)]
        ref = [torch.empty_like(x) for _ in range(n)]
        dist.all_gather(mine, x, group=braid)
        dist.all_gather(ref, x)
        for r in range(n):
            expect_equal(f"allgather {dtype} from {r}", mine[r], ref[r])
        flat = torch.empty(n * 333, dtype=dtype)
        dist.all_gather_into_tensor(flat, x, group=braid)
        expect_equal(f"all_gather_into_tensor {dtype}", flat, torch.cat(ref))

    # gather and scatter to/from every root.
    for root in range(n):
        x = _input(torch, me, torch.int32, 100)
        mine = [torch.empty_like(x) for _ in range(n)] if me == root else None
        ref = [torch.empty_like(x) for _ in range(n)] if me == root else None
        dist.gather(x, mine, dst=root, group=braid)
        dist.gather(x, ref, dst=root)
        if me == root:
            for r in range(n):
                expect_equal(f"gather root={root} from {r}", mine[r], ref[r])
        pieces = [_input(torch, 50 + r, torch.float64, 100) for r in range(n)] if me == root else None
        got = torch.empty(100, dtype=torch.float64)
        want = torch.empty(100, dtype=torch.float64)
        dist.scatter(got, pieces, src=root, group=braid)
        dist.scatter(want, pieces, src=root)
        expect_equal(f"scatter root={root}", got, want)

    # reduce_scatter (gloo has none in torch 1.13): local reference.
    for dtype in [torch.float32, torch.int64, torch.bfloat16]:
        count = 257
        ins = [_input(torch, me * n + r, dtype, count) for r in range(n)]
        out = torch.empty(count, dtype=dtype)
        dist.reduce_scatter(out, ins, group=braid)
        want = _local_reduce(torch, [_input(torch, r * n + me, dtype, count) for r in range(n)], "sum")
        expect_equal(f"reduce_scatter {dtype}", out, want)
        big = torch.cat(ins)
        out2 = torch.empty(count, dtype=dtype)
        dist.reduce_scatter_tensor(out2, big, group=braid)
        expect_equal(f"reduce_scatter_tensor {dtype}", out2, want)

    # all_to_all_single with equal and uneven splits, gloo as reference.
    x = _input(torch, me, torch.float32, 6 * n).reshape(2 * n, 3)
    mine, ref = torch.empty_like(x), torch.empty_like(x)
    dist.all_to_all_single(mine, x, group=braid)
    dist.all_to_all_single(ref, x)
    expect_equal("all_to_all_single equal", mine, ref)
    in_splits = [r + me + 1 for r in range(n)]  # rows this rank sends to r
    out_splits = [me + r + 1 for r in range(n)]  # rows r sends here
    x = _input(torch, me, torch.int64, sum(in_splits) * 2).reshape(-1, 2)
    mine = torch.empty(sum(out_splits), 2, dtype=torch.int64)
    ref = torch.empty_like(mine)
    dist.all_to_all_single(mine, x, out_splits, in_splits, group=braid)
    dist.all_to_all_single(ref, x, out_splits, in_splits)
    expect_equal("all_to_all_single uneven", mine, ref)
    # all_to_all with lists (gloo has none): local reference.
    ins = [torch.full((r + 2,), 100 * me + r, dtype=torch.int32) for r in range(n)]
    outs = [torch.empty(me + 2, dtype=torch.int32) for r in range(n)]
    dist.all_to_all(outs, ins, group=braid)
    for r in range(n):
        expect_equal(f"all_to_all from {r}", outs[r], torch.full((me + 2,), 100 * r + me, dtype=torch.int32))

    # send/recv around the ring, ordered so that blocking calls cannot deadlock; then the
    # same exchange at once through batch_isend_irecv.
    right, left = (me + 1) % n, (me - 1) % n
    payload = _input(torch, me, torch.float64, 4097)
    got = torch.empty_like(payload)
    if me == 0:
        dist.send(payload, right, group=braid)
        dist.recv(got, left, group=braid)
    else:
        dist.recv(got, left, group=braid)
        dist.send(payload, right, group=braid)
    expect_equal("send/recv ring", got, _input(torch, left, torch.float64, 4097))
    got = torch.empty_like(payload)
    reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, payload, right, braid),
                                   dist.P2POp(dist.irecv, got, left, braid)])
    for req in reqs:
        req.wait()
    expect_equal("batch_isend_irecv ring", got, _input(torch, left, torch.float64, 4097))
    got = torch.empty_like(payload)
    reqs = [dist.isend(payload, right, group=braid), dist.irecv(got, left, group=braid)]
    for req in reqs:
        req.wait()
    expect_equal("isend and irecv at once", got, _input(torch, left, torch.float64, 4097))

    # barrier, and the Work API: wait, is_completed, futures (value and then).
    dist.barrier(group=braid)
    x = torch.ones(10)
    work = dist.all_reduce(x, group=braid, async_op=True)
    work.wait()
    if not work.is_completed():
        failures.append("Work.is_completed() is False after wait()")
    expect_equal("async allreduce", x, torch.full((10,), float(n)))
    x = torch.ones(10)
    fut = dist.all_reduce(x, group=braid, async_op=True).get_future()
    doubled = fut.then(lambda f: f.value()[0] * 2).wait()
    expect_equal("future value", fut.value()[0], torch.full((10,), float(n)))
    expect_equal("future then", doubled, torch.full((10,), 2.0 * n))
    works = [dist.all_reduce(torch.full((100,), float(i)), group=braid, async_op=True) for i in range(20)]
    for i, w in enumerate(works):
        w.wait()
        expect_equal(f"queued allreduce {i}", w.result()[0], torch.full((100,), float(i * n)))

    # Bad inputs raise at the call, with a message.
    def expect_raise(name, fn, words, *alternatives):
        """fn raises with every word of `words` (or of one of the alternatives) in its message."""
        try:
            fn()
        except (RuntimeError, ValueError, TypeError) as e:
            if not any(all(w in str(e) for w in ws) for ws in (words,) + alternatives):
                failures.append(f"{name}: message {str(e)!r} lacks {words}")
            return
        failures.append(f"{name}: no exception")

    expect_raise("non-contiguous", lambda: dist.all_reduce(torch.ones(4, 4).t(), group=braid), ["contiguous"])
    expect_raise("int16 allreduce", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int16), group=braid),
                 ["torch.int16", "cannot be reduced"])
    expect_raise("BAND", lambda: dist.all_reduce(torch.ones(4, dtype=torch.int32), op=ReduceOp.BAND, group=braid),
                 ["BAND", "not supported"])
    expect_raise("allgather sizes", lambda: dist.all_gather([torch.empty(3) for _ in range(n)], torch.ones(4),
                                                            group=braid), ["sizes must match"])
    expect_raise("allgather list length", lambda: dist.all_gather([torch.empty(4)] * (n + 1), torch.ones(4),
                                                                  group=braid), ["output list"])
    expect_raise("base sizes", lambda: dist.all_gather_into_tensor(torch.empty(4 * n + 1), torch.ones(4),
                                                                   group=braid), ["world size"])
    # torch 2.x checks this itself before the backend sees it.
    expect_raise("send to self", lambda: dist.send(torch.ones(2), me, group=braid), ["itself"],
                 ["destination rank", "same"])
    # The group still works after rejected calls.
    x = torch.ones(3)
    dist.all_reduce(x, group=braid)
    expect_equal("allreduce after errors", x, torch.full((3,), float(n)))
    group_cases.check(ctx, failures, expect_equal)
    if me == 0:
        print(f"references: {sorted(sources)}", flush=True)
    return failures


if __name__ == "__main__":
    harness.run(worker)
