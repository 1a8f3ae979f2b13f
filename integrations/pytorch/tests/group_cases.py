"""Checks of the "braid" backend beyond single collectives, run by test_collectives.py in
the same processes: subgroups (split_group through ncclCommSplit, new_group through the
store) against gloo subgroups of the same ranks, PREMUL_SUM, coalesced operations,
monitored_barrier, and the errors for what Braid does not do."""

import datetime
import time


def check(ctx, failures, expect_equal):
    import torch
    import torch.distributed as dist

    braid, n, me = ctx.braid, ctx.world, ctx.rank
    cpu = torch.device("cpu")

    def values(dtype, count, salt):
        g = torch.Generator().manual_seed(100 * me + salt)
        return (torch.randint(-64, 64, (count,), generator=g).to(torch.float64) / 8).to(dtype)

    # split_group: the first n-1 ranks and the last one (2 ranks: two groups of one).
    first = list(range(n - 1)) if n > 2 else [0]
    parts = [first, [r for r in range(n) if r not in first]]
    mine_part = parts[0] if me in parts[0] else parts[1]
    split = dist.split_group(parent_pg=braid, split_ranks=parts, timeout=datetime.timedelta(seconds=60))
    # gloo subgroups of the same ranks (every rank takes part in making each).
    gloo_parts = [dist.new_group(p, backend="gloo") for p in parts]
    gloo_mine = gloo_parts[0] if me in parts[0] else gloo_parts[1]
    via_store = dist.new_group(parts[0], backend="braid")
    if split is None or split == dist.GroupMember.NON_GROUP_MEMBER:
        failures.append("split_group gave this rank no group")
        return
    if split.size() != len(mine_part) or dist.get_backend(split) != "braid":
        failures.append(f"split_group: size {split.size()} backend {dist.get_backend(split)}, "
                        f"want {len(mine_part)} braid")
    for dtype in (torch.float32, torch.bfloat16):
        x = values(dtype, 1000, 1)
        mine, ref = x.clone(), x.clone()
        dist.all_reduce(mine, group=split)
        dist.all_reduce(ref, group=gloo_mine)
        expect_equal(f"split_group allreduce {dtype}", mine, ref)
        out = torch.empty(len(mine_part) * 1000, dtype=dtype)
        dist.all_gather_into_tensor(out, x, group=split)
        ref_list = [torch.empty_like(x) for _ in mine_part]
        dist.all_gather(ref_list, x, group=gloo_mine)
        expect_equal(f"split_group all_gather_into_tensor {dtype}", out, torch.cat(ref_list))
    if me in parts[0]:
        x = values(torch.bfloat16, 333, 2)
        mine, ref = x.clone(), x.clone()
        dist.all_reduce(mine, group=via_store)
        dist.all_reduce(ref, group=gloo_parts[0])
        expect_equal("new_group (store) allreduce bfloat16", mine, ref)
        dist.destroy_process_group(via_store)
    dist.destroy_process_group(split)

    # PREMUL_SUM: sum of factor * x.
    for dtype in (torch.float32, torch.bfloat16):
        x = values(dtype, 64, 3)
        got = x.clone()
        dist.all_reduce(got, op=dist._make_nccl_premul_sum(2.0), group=braid)
        want = torch.zeros(64, dtype=torch.float64)
        for r in range(n):
            g = torch.Generator().manual_seed(100 * r + 3)
            want += 2 * (torch.randint(-64, 64, (64,), generator=g).to(torch.float64) / 8).to(dtype).double()
        expect_equal(f"PREMUL_SUM {dtype}", got, want.to(dtype))

    # Coalesced: several all_gather_into_tensor / reduce_scatter_tensor / all_reduce in one group.
    ins = [values(torch.float32, 10 + i, 4 + i) for i in range(3)]
    outs = [torch.empty(n * t.numel()) for t in ins]
    with dist._coalescing_manager(group=braid, device=cpu, async_ops=True) as cm:
        for o, i in zip(outs, ins):
            dist.all_gather_into_tensor(o, i, group=braid)
    cm.wait()
    for k, (o, i) in enumerate(zip(outs, ins)):
        ref = [torch.empty_like(i) for _ in range(n)]
        dist.all_gather(ref, i)
        expect_equal(f"coalesced all_gather_into_tensor {k}", o, torch.cat(ref))
    bigs = [values(torch.float32, n * (5 + i), 8 + i) for i in range(2)]
    smalls = [torch.empty(5 + i) for i in range(2)]
    with dist._coalescing_manager(group=braid, device=cpu, async_ops=True) as cm:
        for s, b in zip(smalls, bigs):
            dist.reduce_scatter_tensor(s, b, group=braid)
    cm.wait()
    for k, (s, b) in enumerate(zip(smalls, bigs)):
        ref = b.clone()
        dist.all_reduce(ref)
        expect_equal(f"coalesced reduce_scatter_tensor {k}", s, ref.view(n, -1)[me])
    tensors = [values(torch.float64, 7 * (i + 1), 12 + i) for i in range(3)]
    refs = [t.clone() for t in tensors]
    with dist._coalescing_manager(group=braid, device=cpu, async_ops=True) as cm:
        for t in tensors:
            dist.all_reduce(t, group=braid)
    cm.wait()
    for k, (t, r) in enumerate(zip(tensors, refs)):
        dist.all_reduce(r)
        expect_equal(f"coalesced all_reduce {k}", t, r)

    # recv from any source: an error that says so.
    try:
        dist.recv(torch.empty(2), group=braid)
        failures.append("recv without src did not raise")
    except RuntimeError as e:
        if "any source" not in str(e):
            failures.append(f"recv without src: {e}")

    # monitored_barrier: passes when all come; when the last rank stays away, rank 0 names it
    # within the timeout, and the others are not released.
    dist.monitored_barrier(group=braid, timeout=datetime.timedelta(seconds=30))
    if me != n - 1:
        start = time.monotonic()
        try:
            dist.monitored_barrier(group=braid, timeout=datetime.timedelta(seconds=2), wait_all_ranks=True)
            failures.append("monitored_barrier without the last rank passed")
        except RuntimeError as e:
            took = time.monotonic() - start
            want = f"rank {n - 1} did not arrive" if me == 0 else "not released"
            if want not in str(e) or took > 10:
                failures.append(f"monitored_barrier without rank {n - 1}: after {took:.1f} s: {e}")
    dist.barrier()  # the last rank waits here for the others' verdicts
