// The -h text (kept apart from the parser, which it only describes).
#include "common/options.h"

namespace braid::bench {

std::string usageText(std::string_view program) {
  std::string text = "usage: " + std::string(program) + " [flags]   (nccl-tests' flags; sizes take K/M/G suffixes)\n";
  text +=
      "  -t, --nthreads N            threads per process (default 1)\n"
      "  -g, --ngpus N               ranks per thread, driven in one group (default 1)\n"
      "  -b, --minbytes SIZE         first size (default 32M)\n"
      "  -e, --maxbytes SIZE         last size (default 32M)\n"
      "  -i, --stepbytes SIZE        additive step when -f is 1 (default 1M)\n"
      "  -f, --stepfactor N          multiplicative step (default 1: off)\n"
      "  -n, --iters N               timed iterations (default 20)\n"
      "  -m, --agg_iters N           operations aggregated per iteration in one group (default 1)\n"
      "  -w, --warmup_iters N        warm-up operations per size, doubling from -b to -e (default 1)\n"
      "  -N, --run_cycles N          repeat the sweep N times, 0 = forever (default 1)\n"
      "  -p, --parallel_init 0|1     each thread creates its own communicators (default 0)\n"
      "  -c, --check N               correctness-check rounds per size and placement (default 1)\n"
      "  -o, --op NAME               sum prod max min avg mulsum all, or a comma list (default sum)\n"
      "  -d, --datatype NAME         int8 uint8 int32 uint32 int64 uint64 half float double bfloat16\n"
      "                              f8e4m3 f8e5m2 all, or a comma list (default float)\n"
      "  -r, --root RANK             root of rooted collectives; -1 or all = every rank (default 0)\n"
      "  -z, --blocking 0..3         1: barrier after each operation; 3: barrier per iteration, untimed\n"
      "  -a, --average 0..3          combine ranks' times: 0 rank 0, 1 mean, 2 min, 3 max (default 1)\n"
      "  -C, --report_cputime 0|1    report the process's CPU time per operation\n"
      "  -S, --report_timestamps 0|1 append a timestamp to each row\n"
      "  -T, --timeout SECONDS       fail (exit 4) when an operation makes no progress for this long\n"
      "  -J, --output_file FILE      also write the results as JSON (docs/benchmarks.md)\n"
      "  -u, --unalign N             offset the buffers by N elements\n"
      "  -x, --cta_policy 0..2       ncclConfig_t.CTAPolicy of the communicators\n"
      "  -y, --stream_null 0|1       accepted; streams play no part in host mode\n"
      "  -R, --local_register <0-2>  register the buffers: 1 ncclCommRegister, 2 ncclCommWindowRegister\n"
      "                              (windows of ncclMemAlloc memory let host-mode collectives run\n"
      "                              single-copy)\n"
      "  -G, -D, -V, -M, -I, -K      GPU-mode flags: only 0 is accepted in host mode\n"
      "  -h, --help                  this text\n"
      "Run under braidrun, srun, mpirun or torchrun for several processes; the job has\n"
      "processes x t x g ranks.\n";
  return text;
}

}  // namespace braid::bench
