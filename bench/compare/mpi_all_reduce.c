/* MPI_Allreduce timed the way all_reduce_perf times ncclAllReduce (float sum, out of place,
   warm-up, then the mean of N iterations, busbw = algbw * 2(n-1)/n), so that an MPI's
   numbers can be put next to Braid's in one run. Built by scripts/compare-mpi.sh with mpicc;
   not part of the regular build. Usage: mpirun -np N mpi_all_reduce MINBYTES MAXBYTES ITERS [WARMUP=2]
   A size runs ITERS iterations, or fewer where the warm-up shows they would take more than
   a second (all ranks agree on the count): oversubscribed, Open MPI's polling ranks take
   milliseconds per all-reduce, and 20000 iterations of each small size would take minutes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, n;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n);
  size_t minBytes = argc > 1 ? strtoull(argv[1], NULL, 10) : 8;
  size_t maxBytes = argc > 2 ? strtoull(argv[2], NULL, 10) : (64u << 20);
  int iters = argc > 3 ? atoi(argv[3]) : 20;
  int warmup = argc > 4 ? atoi(argv[4]) : 2;
  for (size_t bytes = minBytes; bytes <= maxBytes; bytes *= 4) {
    size_t count = bytes / sizeof(float) ? bytes / sizeof(float) : 1;
    float* in = malloc(count * sizeof(float));
    float* out = malloc(count * sizeof(float));
    for (size_t i = 0; i < count; i++) in[i] = (float)(i % 7);
    double warmStart = MPI_Wtime();
    for (int w = 0; w < warmup; w++) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double perIteration = warmup > 0 ? (MPI_Wtime() - warmStart) / warmup : 0.0;
    MPI_Allreduce(MPI_IN_PLACE, &perIteration, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int timed = iters;
    if (perIteration > 0 && iters * perIteration > 1.0) {
      int inASecond = (int)(1.0 / perIteration);
      timed = inASecond > 10 ? inASecond : 10;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < timed; i++) MPI_Allreduce(in, out, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    double seconds = (MPI_Wtime() - start) / timed;
    double busbw = (double)(count * sizeof(float)) / seconds / 1e9 * 2.0 * (n - 1) / n;
    if (rank == 0) printf("%12zu %10.2f %7.2f\n", count * sizeof(float), seconds * 1e6, busbw);
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
